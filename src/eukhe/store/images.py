"""The images prompts attach, in the runs' store: each once, by its SHA-256, whatever the
number of runs and sessions that attach it. A run's messages name an image (`ai.image.Image`);
its request reads the bytes from here, so no step output and no workflow input holds them.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping

import sqlalchemy as sa

from eukhe.ai.image import Image
from eukhe.errors import Code, EukheError
from eukhe.store.engine import Tables

IMAGES = "eukhe_images"


class ImageStoreError(EukheError, RuntimeError):
    """The image table cannot be read or written, or lacks an image: says which and why."""

    code = Code.STORE


_META = sa.MetaData()
_images = sa.Table(
    IMAGES,
    _META,
    sa.Column("sha256", sa.Text, primary_key=True),
    sa.Column("media_type", sa.Text, nullable=False),
    sa.Column("width", sa.Integer, nullable=False),
    sa.Column("height", sa.Integer, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("at", sa.Float, nullable=False),  # when it was first kept
)


class Images(Tables):
    """The image table. Every method raises ImageStoreError, never a driver's error."""

    error = ImageStoreError
    what = "the images"
    meta = _META

    def keep(self, image: Image, data: bytes) -> None:
        """The image's bytes, kept once: a second keep of the same bytes writes nothing."""
        if hashlib.sha256(data).hexdigest() != image.sha256:
            raise ImageStoreError(f"{image.name}: its bytes are not the ones its SHA-256 names")

        def put(c: sa.Connection) -> None:
            if c.execute(sa.select(_images.c.sha256).where(_images.c.sha256 == image.sha256)).first():
                return
            row = {"sha256": image.sha256, "media_type": image.media_type, "width": image.width}
            try:
                with c.begin_nested():
                    c.execute(_images.insert().values(**row, height=image.height, data=data, at=time.time()))
            except sa.exc.IntegrityError:  # another process kept the same picture meanwhile
                pass

        self._tx(f"keep the image {image.name}", put)

    def read(self, images: Iterable[Image]) -> Mapping[str, bytes]:
        """The bytes of each image, by SHA-256; one the table lacks is an error naming it."""
        wanted = {i.sha256: i for i in images}
        if not wanted:
            return {}

        def get(c: sa.Connection) -> dict[str, bytes]:
            q = sa.select(_images.c.sha256, _images.c.data).where(_images.c.sha256.in_(list(wanted)))
            return {str(sha): bytes(data) for sha, data in c.execute(q)}

        got: dict[str, bytes] = self._tx("read the attached images", get)
        for sha, image in wanted.items():
            if sha not in got:
                raise ImageStoreError(f"{image.name} ({sha[:12]}): not in the store's image table")
        return got
