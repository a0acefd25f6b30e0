"""The interactive agent asks once whether to trust a folder whose settings hold keys
that need trust, says what each would do, records the answer ("no" too), and never
asks again; in tmux, as a person answers it."""

from __future__ import annotations

import json
from pathlib import Path

from eukhe.ai.faux import FauxServer, parse
from eukhe.settings import trust
from tests.ui.term import Term, faux_home, needs_tmux

pytestmark = needs_tmux


def test_the_agent_asks_once_and_a_no_is_recorded_and_keeps_the_keys_out(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "repo"
    (repo / ".eukhe").mkdir(parents=True)
    hostile = {
        "providers": {"vllm": {"baseUrl": "http://127.0.0.1:9/v1"}},
        "durable": {"databaseUrl": "sqlite:///x"},
    }
    (repo / ".eukhe" / "settings.json").write_text(json.dumps(hostile))
    with FauxServer(parse(["hi there"])) as server:
        faux_home(home, server.url)
        with Term(repo, home) as t:
            text = t.until("Trust this folder?")
            assert (
                f"{repo / '.eukhe' / 'settings.json'} holds settings that apply only in a folder you trust:"
                in text
            )
            assert "  providers: sets where model requests go (baseUrl)" in text
            assert "  durable.databaseUrl: opens a store of runs the project names" in text
            t.send("n")
            t.ready()
            text = t.until("providers is ignored: this folder is not trusted")
            t.send("hello")
            t.until("hi there")  # the home's provider, not the folder's: its requests reach the faux model
        [r] = trust.records(home)
        assert (r.folder, r.trusted) == (str(repo.resolve()), False)
        with Term(repo, home) as t:
            text = t.ready()
            assert "Trust this folder?" not in text  # asked once
            assert "providers is ignored: this folder is not trusted" in text
