"""A home left readable by others (an older eukhe made it 0755, its files 0644) is
tightened when eukhe opens it, and says so in one line; what a symlink in it points
at is left alone; a home of another user is refused; `eukhe doctor` says what it
cannot fix, and that all is well otherwise."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eukhe.home import HomeError, made_private, open_home
from tests.home.modes import loose, modes
from tests.proc import eukhe

OTHER = 65534  # nobody


def loose_home(root: Path) -> Path:
    """A home as an older eukhe left it: everything readable by every local user."""
    home = root / "home"
    (home / "logs").mkdir(parents=True)
    for name, text in (("history", "+my secret prompt\n"), ("logs/dbos.log", "log\n"), ("owner.log", "")):
        (home / name).write_text(text)
        os.chmod(home / name, 0o644)
    os.chmod(home / "logs", 0o755)
    os.chmod(home, 0o755)
    return home


def test_a_loose_home_is_tightened_when_a_command_opens_it_with_one_line_saying_so(tmp_path: Path) -> None:
    home = loose_home(tmp_path)
    done = eukhe("resume", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "open to other users" in line]
    assert said == [
        f"eukhe: the home {home} was open to other users (0755); "
        "made it 0700 (and 3 files 0600 and 1 folder 0700)"
    ]
    assert loose(home) == {}
    again = eukhe("resume", cwd=tmp_path, home=home)
    assert "open to other users" not in again.stderr  # said once: the next open finds nothing to tighten


def test_opening_names_what_it_tightened_inside_a_private_home_and_leaves_symlinks_targets(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    open_home(home)
    outside = tmp_path / "shared.txt"
    outside.write_text("not the home's")
    os.chmod(outside, 0o644)
    (home / "link").symlink_to(outside)
    (home / "trust.json").write_text("{}")
    os.chmod(home / "trust.json", 0o664)
    _, said = made_private(home)
    assert said == f"eukhe: in the home {home}, what other users could read was made private: 1 file 0600"
    assert modes(home)["trust.json"] == "0o600"
    assert oct(os.stat(outside).st_mode & 0o777) == "0o644"  # not the home's: left as it is


def test_a_home_of_another_user_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    os.chown(home, OTHER, OTHER)
    with pytest.raises(
        HomeError, match=f"the home {home} belongs to uid {OTHER}, not to you .*fix: set EUKHE_HOME"
    ):
        open_home(home)
    done = eukhe("resume", cwd=tmp_path, home=home)
    assert done.returncode == 2 and f"belongs to uid {OTHER}" in done.stderr, done.stderr


def test_doctor_says_all_is_well_in_a_private_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    open_home(home)
    done = eukhe("doctor", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stdout
    assert f"✓ home: {home} is yours alone (folders 0700, files 0600)" in done.stdout.splitlines()


def test_doctor_reports_what_it_cannot_fix(tmp_path: Path) -> None:
    """A file of another user in the home: eukhe cannot take it back (it may still
    change its mode; its owner can change it again)."""
    home = tmp_path / "home"
    open_home(home)
    planted = home / "settings.json"
    planted.write_text("{}")
    os.chown(planted, OTHER, OTHER)
    done = eukhe("doctor", cwd=tmp_path, home=home)
    assert done.returncode == 1, done.stdout
    [line] = [line for line in done.stdout.splitlines() if str(planted) in line]
    assert line.startswith(f"✗ {planted} belongs to uid {OTHER}, not to you") and "fix:" in line
    assert "yours alone" not in done.stdout
