"""What a session's runs are made of: the settings in effect, the model (checked before
any run), the skills offered and the prompt templates; and the spec of one run, the
input of its durable workflow. `eukhe run` makes one run of it, the interactive agent
many."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eukhe.admission import limits_from
from eukhe.ai.models import resolve
from eukhe.errors import Code, EukheError
from eukhe.settings import home, loaded, run_settings
from eukhe.settings.permissions import in_force
from eukhe.skills import expand, get_resource_snapshot, invoke_skill, system_prompt_section

NO_MODEL = (
    "no model configured: pass --model provider/model "
    "(e.g. --model openai/gpt-4.1 with OPENAI_API_KEY set, "
    "or --model vllm/NAME --base-url http://127.0.0.1:8000/v1), "
    'or set "model" in {settings}'
)
"""What a session with no model says; `settings`: the home's settings file in effect."""


STEPS = 2
"""The layout of a run's recorded steps: 2 has a `permit` step before each tool call. A run
that began under 1 (eukhe 0.1) replays its steps as they were recorded, so it resumes
without the permission gate; the sandbox still holds its calls."""


class NoModel(EukheError, ValueError):
    """No model is named: by the command line, nor by the settings."""

    code = Code.MODEL

    def __init__(self, settings: Path) -> None:
        super().__init__(NO_MODEL.format(settings=settings))


@dataclass
class Setup:
    """A session's runs as the settings and the project make them."""

    cwd: Path
    settings: dict[str, Any]
    model: str
    base_url: str | None
    api: str | None
    run: Any  # eukhe.settings.run.Settings
    snapshot: Any  # eukhe.skills.ResourceSnapshot: skills, templates, and each that failed
    extra: dict[str, Any] = field(default_factory=dict)  # more fields of every spec
    notices: tuple[str, ...] = ()  # the project's keys an untrusted folder ignores (`settings.trust`)
    sandbox: str | None = None  # --sandbox: the user's mode for these runs, over the settings
    approval: str | None = None  # --approval: the user's policy for these runs, over the settings

    @property
    def system(self) -> str:
        return system_prompt_section(self.snapshot.skills)

    def diagnostics(self) -> list[tuple[str, str]]:
        """Each skill and template that did not load, as ("skill" | "prompt", "path: error")."""
        return [
            (kind[:-1], f"{d.path}: {d.error}")
            for kind in ("skills", "prompts")
            for d in self.snapshot.diagnostics[kind]
        ]

    def expand(self, prompt: str) -> str:
        """`/name args` through its template; `/skill:name args` with the skill's text."""
        return invoke_skill(prompt, self.snapshot.skills) or expand(prompt, self.snapshot.prompts) or prompt

    def spec(self, prompt: str | None) -> dict[str, Any]:
        """The input of one run's workflow (`run.workflow.run_workflow_body`)."""
        return {
            "prompt": prompt,
            "system": self.system,
            "model": self.model,
            "baseUrl": self.base_url,
            "api": self.api,
            "cwd": str(self.cwd),
            "settings": dataclasses.asdict(self.run),
            "sandbox": self.sandbox,  # None: the settings' (`settings.permissions.in_force`)
            "approval": self.approval,
            "steps": STEPS,
            **self.extra,
        }


def setup(
    cwd: Path,
    model: str | None = None,
    base_url: str | None = None,
    api: str | None = None,
    sandbox: str | None = None,
    approval: str | None = None,
) -> Setup:
    """The session's setup; a model that cannot be used, or settings that cannot be read
    (permissions too, with the `--sandbox` and `--approval` flags), fail here with their
    cause, before any run (SettingsError, ModelError, NoModel)."""
    got = loaded(cwd)
    settings = got.values
    name = model or settings.get("model")
    if not isinstance(name, str) or not name:
        raise NoModel(home() / "settings.json")
    route = resolve(name, settings, base_url, api)
    rs = run_settings(settings, name)
    limits_from(settings, route.provider)  # and so do its admission limits
    snapshot = get_resource_snapshot(cwd, settings=settings)
    in_force(cwd, None, sandbox, approval)  # every rule, the mode, the policy and the deadline read
    made = Setup(cwd, settings, name, base_url, api, rs, snapshot, notices=got.notices)
    made.sandbox, made.approval = sandbox, approval
    return made
