"""The only code that talks to the service: paging, windows, retries, accounts, accounting."""
