"""Whether the store at a URL opens and reads, for `eukhe doctor`: a connection, a query, and on
SQLite its quick check. SQLAlchemy loads only when the probe runs."""

from __future__ import annotations


def read_problem(url: str) -> str | None:
    """What keeps the store at `url` from opening and reading, with its fix; None: it does."""
    import sqlalchemy as sa  # only `eukhe doctor` opens the store this way

    engine = sa.create_engine(url)
    try:
        with engine.connect() as c:
            c.execute(sa.text("SELECT 1"))
            if url.startswith("sqlite"):
                check = c.execute(sa.text("PRAGMA quick_check")).scalar()
                if check != "ok":
                    return f"damaged store {url}: {check}; fix: move it away (the runs in it are lost)"
    except Exception as e:
        return (
            f"unreadable store {url}: {type(e).__name__}: {str(e).splitlines()[0]}; "
            "fix: check it, or move it away"
        )
    finally:
        engine.dispose()
    return None
