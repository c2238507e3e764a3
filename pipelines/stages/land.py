"""Landing: every page raw, as received, before anything parses it (nothing is lost even when
a page breaks its contract), with its e-mail addresses already replaced by pseudonyms."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import PurePosixPath

import orjson

from pipelines.client.paging import Page
from pipelines.shaping import Context
from transforms.meaning import pseudonymize_text
from warehouse.raw import Fetch, RawStore

Located = tuple[str, Page]  # where a page came from (for error messages), and the page


def private(page: Page, key: bytes) -> Page:
    """The page with every e-mail address replaced by its keyed pseudonym, in its bytes and
    its decoded body alike: nothing after this point, the raw landing included, sees one."""
    content = page.content or orjson.dumps(page.body)
    hidden = pseudonymize_text(content, key)
    if hidden == content:
        return Page(page.path, page.params, page.body, content)
    return Page(page.path, page.params, orjson.loads(hidden), hidden)


async def land(
    raw: RawStore,
    folder: PurePosixPath,
    pages: AsyncIterator[Located],
    extracted_at: datetime,
    context: Context,
) -> AsyncIterator[Located]:
    """Land each page of one fetch as it arrives and pass it on; the fetch is marked complete
    once its last page is landed."""
    raw.start(folder)
    number = 0
    async for where, received in pages:
        number += 1
        page = private(received, context.pseudonym_key)
        # Compressing and writing release the GIL: in a thread, they overlap the typing of the
        # other sources' pages, and the event loop sends requests and reads answers meanwhile.
        await asyncio.to_thread(raw.write, folder, number, page.path, page.params, page.content)
        yield f"{where}, page {number}", page
    raw.finish(
        folder,
        {
            "extracted_at": extracted_at.isoformat(),
            "pages": number,
            "reference": context.reference.isoformat(),
            "run_id": context.run_id,
        },
    )


def reread(raw: RawStore, fetch: Fetch, key: bytes) -> Iterator[Located]:
    """The pages of a landed fetch, for a rebuild; a page landed in clear by an earlier
    version is pseudonymized and rewritten in place."""
    for number, (file, path, params, content) in enumerate(raw.read(fetch.folder), start=1):
        page = private(Page(path, params, orjson.loads(content), content), key)
        if page.content != content:
            raw.rewrite(file, path, params, page.content)
        yield f"raw {fetch.folder}, page {number}", page
