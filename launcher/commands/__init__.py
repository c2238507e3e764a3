"""`adwh`'s subcommands, one module each, in the order `adwh --help` lists them. Each registers
its parser (`register`) with the function that runs it (`handler`, given the settings and the
arguments), and says whether a refusal is told to the alert destinations (`tells_refusals`:
the commands that start runs, which a scheduler starts unattended) and whether it has a home of
its own (`own_home`: not the default one)."""

from launcher.commands import (
    backfill,
    check,
    demo,
    home,
    lake,
    rebuild,
    run,
    sandbox,
    sql,
    ui,
)

COMMANDS = (run, backfill, rebuild, demo, check, home, ui, sql, lake, sandbox)
