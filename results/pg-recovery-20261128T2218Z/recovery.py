"""After a PostgreSQL outage of OUTAGE seconds (with the app's store trying, and failing, meanwhile), how long
until the first transaction succeeds once the server is back: the pool as before (psycopg_pool's own reconnect
backoff) against the pool renewed when the server answers (core.db.PostgreSQL._connection). Three runs each."""
import sys, time
sys.path.insert(0, "/work/main")
from core.db import PostgreSQL, DatabaseError
from testbed.postgres import throwaway_server

OUTAGE = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0


def old_tx(db):  # the code before: the pool's own connection(), no renewal
    with db.pool.connection() as con:
        with con.transaction():
            con.execute("SELECT 1")


def new_tx(db):
    with db.tx() as r:
        r.one("SELECT 1")


with throwaway_server() as server:
    for name, tx in (("before", old_tx), ("now", new_tx), ("before", old_tx), ("now", new_tx), ("before", old_tx), ("now", new_tx)):
        PostgreSQL._pools.clear()
        db = PostgreSQL(server.dsn)
        tx(db)
        server.stop("fast")
        t_end = time.monotonic() + OUTAGE
        while time.monotonic() < t_end:  # the app keeps asking during the outage (each try waits its timeout)
            try:
                tx(db)
            except Exception:
                pass
        server.start()
        t0 = time.monotonic()
        tries = 0
        while True:
            tries += 1
            try:
                tx(db)
                break
            except Exception:
                pass
        print(f"{name}: first transaction {time.monotonic() - t0:.1f} s after the restart ({tries} tries), outage {OUTAGE:.0f} s",
              flush=True)
