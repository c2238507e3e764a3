"""`adwh home`: where the home is and the service it belongs to; `home move`, to a new address
of the same service."""

import argparse
import asyncio

from launcher.common import counted
from pipelines.settings import Settings, load_settings


def register(commands: argparse._SubParsersAction) -> None:
    home = commands.add_parser("home", help="where the home is, and the service it belongs to")
    home_commands = home.add_subparsers(dest="home_command")
    home_move = home_commands.add_parser(
        "move", help="move the home to a new address of the same service (a proxy moved, say)"
    )
    home_move.add_argument("--to", required=True, help="the service's new address (https://…)")
    home.set_defaults(
        handler=lambda settings, args: command_home(settings, getattr(args, "to", None))
    )


def command_home(settings: Settings, move_to: str | None) -> int:
    """`adwh home`: where the home is, and the service it belongs to; `--to`: moved to a new
    address of the same service, once the service there says the key is the home's."""
    from pipelines import home
    from pipelines.session import open_session

    print(f"home: {settings.home}")
    if move_to is not None:
        moved = load_settings(ADS_API_BASE_URL=move_to)

        async def credential() -> object:
            async with open_session(moved) as session:
                return session.credential

        before, after = home.move(moved, asyncio.run(credential()))
        print(f"moved: from {before.name} to {after.name}")
        return 0
    holder = home.recorded(settings.home)
    if holder is None:
        print("service: none recorded yet; its first run records the one it reads")
        return 0
    accounts = counted(len(holder.accounts), "account")
    print(f"service: {holder.name}, key {holder.kind} {holder.credential or ''}".rstrip())
    print(f"reaching {accounts}, recorded {holder.recorded_at}")
    return 0
