"""`adwh sandbox serve`: the embedded sandbox over HTTP on 127.0.0.1."""

import argparse

from launcher.common import UsageError
from pipelines.settings import SANDBOX_KEY, SANDBOX_PRESETS, Settings


def register(commands: argparse._SubParsersAction) -> None:
    sandbox = commands.add_parser("sandbox", help="the embedded sandbox service")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True)
    serve = sandbox_commands.add_parser("serve", help="serve the sandbox on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="on 127.0.0.1 (%(default)s)")
    serve.add_argument(
        "--preset", choices=SANDBOX_PRESETS, default="small", help="how much data (%(default)s)"
    )
    serve.add_argument("--key", default=SANDBOX_KEY, help="the bearer key it accepts (%(default)s)")
    serve.add_argument(
        "--variant",
        type=int,
        default=0,
        help="0: our sandbox; N > 0: the spec's open choices made otherwise, seeded by N",
    )
    serve.add_argument(
        "--clients",
        type=int,
        default=0,
        help="N > 0: the key is an agency's reaching N client accounts of --preset",
    )
    serve.add_argument(
        "--large-clients",
        type=int,
        default=0,
        help="K: the first K of the --clients accounts are of the large preset instead",
    )
    serve.add_argument(
        "--restate-days",
        type=int,
        help="N > 0: attributed orders and sales of the N most recent days are revised from one "
        "reference date to the next, as in an attribution window (default: "
        "ADWH_SANDBOX_RESTATE_DAYS, else none)",
    )
    sandbox.set_defaults(handler=handle, own_home=True)


def handle(settings: Settings, args: argparse.Namespace) -> int:
    return command_serve(
        settings,
        args.port,
        args.preset,
        args.key,
        args.variant,
        args.clients,
        args.large_clients,
        args.restate_days,
    )


def command_serve(
    settings: Settings,
    port: int,
    preset: str,
    key: str,
    variant: int = 0,
    clients: int = 0,
    large_clients: int = 0,
    restate_days: int | None = None,
) -> int:
    from pipelines.plugin import load_plugin

    if variant < 0:
        raise UsageError(f"--variant must be 0 or more, got {variant}")
    if clients < 0:
        raise UsageError(f"--clients must be 0 or more, got {clients}")
    if not 0 <= large_clients <= clients:
        raise UsageError(f"--large-clients must be 0 to --clients ({clients}), got {large_clients}")
    if restate_days is not None and restate_days < 0:
        raise UsageError(f"--restate-days must be 0 or more, got {restate_days}")
    plugin = load_plugin(settings.sandbox)
    shown = f", variant {variant}" if variant else ""
    shown += f", an agency of {clients} accounts" if clients else ""
    shown += f" ({large_clients} large)" if large_clients else ""
    shown += f", restating {restate_days} days" if restate_days else ""
    print(
        f"sandbox ({preset}{shown}, reference {settings.today}) on http://127.0.0.1:{port}",
        flush=True,
    )
    plugin.serve(
        port=port,
        preset=preset,
        key=key,
        variant=variant,
        today=settings.today,
        clients=clients,
        large_clients=large_clients,
        restate_days=restate_days,
    )
    return 0
