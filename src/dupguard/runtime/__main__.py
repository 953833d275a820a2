"""``python -m dupguard.runtime``: set up and maintain the runtime's stores, check a backend.

    python -m dupguard.runtime init-postgres [DSN] [--table T] [--schema S] [--print-sql]
    python -m dupguard.runtime cleanup-postgres [DSN] [--table T] [--schema S] [--batch N]
    python -m dupguard.runtime conformance MODULE:FACTORY [--check NAME ...]

``init-postgres`` creates the tables ``PostgresBackend`` uses (for a deployment whose
application role may not create tables: give the backend ``create=False``); ``--print-sql``
prints the DDL instead, for a migration tool. ``cleanup-postgres`` deletes expired records
and counters (run it from cron; the backend also sweeps a batch now and then). Without a DSN
libpq's environment (``PGHOST``, ``PGUSER``, ``PGPASSWORD``, …) is used, which keeps a password
out of the process list. ``conformance`` runs :mod:`dupguard.runtime.conformance` against the
backend ``FACTORY()`` returns (a module-level callable, so the process checks can use it).

Exit status: 0 on success, 1 when the store fails or a check fails, 2 for bad arguments.
Standard library only until a command needs its driver.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dupguard.runtime", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def postgres(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument("dsn", nargs="?", default="", help="libpq connection string or URL (default: PG* variables)")
        p.add_argument("--table", default="dupguard", help="table prefix: <table>_records, <table>_counters")
        p.add_argument("--schema", default=None, help="schema of the tables (default: the search_path)")
        return p

    init = postgres("init-postgres", "create the tables PostgresBackend uses")
    init.add_argument("--print-sql", action="store_true", help="print the DDL instead of running it")
    cleanup = postgres("cleanup-postgres", "delete expired records and counters")
    cleanup.add_argument("--batch", type=int, default=10_000, help="rows deleted per statement")
    conf = sub.add_parser("conformance", help="run the conformance suite on a backend")
    conf.add_argument("factory", help="MODULE:CALLABLE returning a new client of the store under test")
    conf.add_argument("--check", action="append", default=None, help="run only this check (repeatable)")
    conf.add_argument("--lease", type=float, default=0.3, help="the short lease of the expiry checks (seconds)")
    return parser


def _backend(args: argparse.Namespace) -> Any:
    from .backends.postgres import PostgresBackend

    return PostgresBackend(args.dsn, table=args.table, schema=args.schema, create=False, sweep_every=0)


def _factory(spec: str) -> Any:
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"expected MODULE:CALLABLE, got {spec!r}")
    try:
        target: Any = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"cannot import {module!r}: {exc}") from exc
    for part in name.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise TypeError(f"{spec} is not callable")
    return target


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from .errors import StoreError

    try:
        if args.command == "init-postgres":
            if args.print_sql:
                from .backends.postgres import schema_sql

                sys.stdout.write(schema_sql(args.table, args.schema))
                return 0
            with _backend(args) as store:
                store.create_tables()
            print(f"created {args.table}_records and {args.table}_counters (if they did not exist)")
        elif args.command == "cleanup-postgres":
            if args.batch < 1:
                raise ValueError("--batch must be at least 1")
            with _backend(args) as store:
                deleted = store.cleanup(batch=args.batch)
            print(f"deleted {deleted} expired rows")
        else:
            from .conformance import CHECKS, Conformance, NotApplicable

            checks = args.check or list(CHECKS)
            unknown = [c for c in checks if c not in CHECKS]
            if unknown:
                raise ValueError(f"unknown check(s) {', '.join(unknown)}; the checks are {', '.join(CHECKS)}")
            suite = Conformance(_factory(args.factory), lease=args.lease)
            failed = False
            for name in checks:
                try:
                    suite.run_check(name)
                    outcome = "passed"
                except NotApplicable as exc:
                    outcome = f"not applicable: {exc}"
                except Exception as exc:
                    outcome, failed = f"FAILED: {type(exc).__name__}: {' '.join(str(exc).split())}", True
                print(f"{name}: {outcome}", flush=True)
            return 1 if failed else 0
    except (StoreError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, AttributeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
