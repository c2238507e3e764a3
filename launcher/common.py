"""What every subcommand of `adwh` shares: one line for every failure, the exit codes, the
dates it is given."""

import argparse
from datetime import date
from typing import NoReturn

EXIT_USAGE = 2

EXIT_FAILED = 1


class UsageError(ValueError):
    """Bad input from the user; the message is the one line they see."""


class RunRefusedError(UsageError):
    """A run that cannot start where it was asked to (its home, its lock, its secrets, the
    webserver): not a typo of the person at the terminal, but what a scheduled `adwh run` meets
    unattended, so it is told to the alert destinations as well."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`adwh: …`) like every other failure, not the
    usage block: schedulers and log collectors keep the last line, and it must say why."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"adwh: {message} (see {self.prog} --help)\n")


def parse_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


FIRST_DAY_HELP = "first date (YYYY-MM-DD), on or after ADWH_START_DATE"

LAST_DAY_HELP = "last date (YYYY-MM-DD), inclusive, at most yesterday (from ADWH_TODAY)"


def counted(number: int, thing: str) -> str:
    """`1 run`, `2 runs`."""
    return f"{number} {thing}{'' if number == 1 else 's'}"
