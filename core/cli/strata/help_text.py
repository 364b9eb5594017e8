"""The texts `stratagate strata` prints with no command (`BANNER`) and for `--agent-help` (`AGENT_HELP`)."""

BANNER = """\
Strata: three-tier markdown memory for agents (active -> cooled -> archive)
Usage: strata <command> [options]      (this build: stratagate strata [--data-dir DIR] <command>)
Add --json anywhere for one-line JSON output.

SETUP
  strata init [--local|-l|--global|-g] [--non-interactive]
                                     create ./strata_data (or ~/.strata with --global)
  strata config [get KEY | set KEY VALUE]
                                     show or change settings (strata.json)
  strata status                      files per tier, pending migrations, daemon state

READING / WRITING
  strata add PATH CONTENT...         write an active file (content from stdin if omitted)
  strata add --text WORDS...         write a quick note
  strata read PATH                   read through the tiers (cooled reads count, archived files restore)
  strata list [PATH]                 the active folder's entries
  strata list-stratum-2              the cooled files
  strata index                       rebuild active/index.md

SEARCHING
  strata search WORDS...             search every tier (alias: query)

LIFECYCLE
  strata migrate|evict|promote|maintenance [--dry-run]
                                     one janitor step (maintenance: promote, migrate, evict)
  strata forget PATH                 archive a cooled file now
  strata rehydrate ID-OR-PATH [--target=active|cooled]
                                     restore an archived file
  strata repair-sidecar | rebuild-index
                                     rebuild a damaged access sidecar or shadow index

DAEMON
  strata serve [--interval=N] [--live] [--dry-run]
                                     run the janitor every N seconds (alias: daemon)
  strata stop | restart | history [--lines=N] | cost

AGENT INTEGRATION
  strata mcp                         the MCP server (stdio) with the strata_* tools
  strata --agent-help                a guide for agents

Not in this build (they need outside services): qmd-setup, qmd-embed, qmd-status, distiller, skill,
pi-install, install-service, uninstall-service.
"""

AGENT_HELP = """\
# Strata memory: a guide for agents

Your long-term memory is a folder of markdown files in three tiers:

1. **active/** — what you work with. Start every session by reading `active/index.md`, a generated map
   of every folder, file title and summary. Organise folders as you like.
2. **cooled/** — files nobody touched for a while (per-folder days in `strata.json`). Reading one counts
   as an access; the third access promotes it back to active.
3. **archive/** — cooled files idle for a long time, kept as JSON blobs and found by search. Reading an
   archived path restores it to active.

## Commands

- `strata read PATH` — read a file from whichever tier holds it.
- `strata add PATH CONTENT` — write or replace an active file (content from stdin when omitted).
- `strata --json query WORDS` — search every tier; results carry `tier` (`stratum_1` active,
  `stratum_2` cooled, `stratum_3` archive), `source`, `score` and `content`.
- `strata rehydrate ID-OR-PATH` — restore an archived result before editing it.
- `strata forget PATH` — archive a cooled file you no longer need close at hand.
- `strata list [PATH]`, `strata status`.

Moves never overwrite a file: a taken destination is reported as a conflict and nothing moves.
Paths are relative to the tier, use `/`, and may not leave it (`..` and absolute paths are refused).
"""
