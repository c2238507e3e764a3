"""`adwh check`: the key (`GET /v1/me`), the accounts and scopes it reaches, what is missing,
and whether the home is this service's."""

import argparse
import asyncio

from launcher.common import EXIT_FAILED
from pipelines.settings import Settings


def register(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser("check", help="check the key: accounts, scopes, what is missing")
    check.set_defaults(handler=lambda settings, _: command_check(settings))


def skipped_without_scopes(scopes: tuple[str, ...]) -> dict[str, list[str]]:
    """The optional scopes the key lacks, and the tables a run skips for each."""
    from pipelines.sources import SOURCES

    skipped: dict[str, list[str]] = {}
    for source in SOURCES:
        if source.optional_scope and source.optional_scope not in scopes:
            names = [output.schema.name for output in source.outputs]
            skipped.setdefault(source.optional_scope, []).extend(names)
    return skipped


def command_check(settings: Settings) -> int:
    from pipelines.home import standing
    from pipelines.session import open_session

    async def go() -> int:
        async with open_session(settings) as session:
            credential = session.credential
            print(f"key: {credential.object} ({credential.subject_type})")
            print(f"scopes: {', '.join(credential.scopes) or 'none'}")
            for account in session.accounts:
                print(f"account: {account.id} {account.name or ''}".rstrip())
            for scope, tables in skipped_without_scopes(credential.scopes).items():
                print(f"without {scope} these tables are skipped: {', '.join(tables)}")
            if credential.missing_scopes:
                print(f"missing scopes the warehouse needs: {', '.join(credential.missing_scopes)}")
                return EXIT_FAILED
            print("the key has every scope the warehouse needs")
            writable, said = standing(settings, credential)
            print(said)
            return 0 if writable else EXIT_FAILED

    return asyncio.run(go())
