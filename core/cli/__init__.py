"""The `stratagate` command line: one module per command group, wired together in `main`."""
