"""The secrets a test's user holds in their environment, and a plain variable beside them.

The tests' fork template (`tests/forks.py`) is started with both in its environment, as a
user's owner is started from a shell that holds theirs: every `eukhe` forked from it has them in
its own `/proc/self/environ` (a process's environment as the kernel keeps it from its exec), so
an attack that reads that file finds them there, as it would in a user's run."""

from __future__ import annotations

SECRETS = {
    "OPENAI_API_KEY": "sk-test-openai-0123456789abcdef",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-access-0123456789",
    "GITHUB_TOKEN": "ghp_test0123456789abcdef",
    "MY_PASSWORD": "hunter2-but-much-longer",
    "LAB_ACCESS": "lab-provider-key-0123456789",  # providers.vllm.apiKeyEnv: secret by that alone
    "CORP_ACCESS": "corp-provider-key-0123456789",  # providers.corp.apiKeyEnv, a provider not in use
}
MARK = {"EUKHE_ENVIRON_MARK": "environ-was-read-0123"}
"""A plain variable: its value shows only where the process's environment itself was read."""
