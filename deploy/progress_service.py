"""The room's progress, kept by the hub: a JupyterHub service (`cutekit-progress`) that learners' kernels send
their progress file to after every check, and that `python -m cutekit report --hub` reads.

    POST <prefix>learners/NAME   the learner's whole ~/.cutekit/progress.jsonl, with a token of NAME's (the
                                 kernel's JUPYTERHUB_API_TOKEN); stored as DATA/NAME.jsonl, replacing the last
    GET  <prefix>learners        with an admin's token (admin:users): {"learners": {NAME: text}, "users": [...]}
                                 (every hub user who is not an admin, so one who never checked is listed too)

Whole files, not lines: a check whose send failed (the hub restarting) is in the next one, and the copy is
always the learner's file as it was at their last check. The copies live in DATA (CUTEKIT_PROGRESS_DATA, on the
hub's own volume), so a learner whose server was culled, or whose pod is gone, is still in the report. A token
identifies its owner through the hub (`/hub/api/user`); NAME must be that owner, so nobody writes another's
file. JupyterHub starts this service and gives it its address (JUPYTERHUB_SERVICE_URL, _PREFIX) and a token
whose role lists the hub's users (jupyterhub_config.py; on a cluster, deploy/helm/values.yaml).
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from jupyterhub.services.auth import HubAuth
from tornado import httpclient, ioloop, web

LIMIT = 4 * 2**20                               # a day of checks is tens of kB; refuse anything near this
NAME = re.compile(r"^[^/\\\x00]+$")


class Progress(web.RequestHandler):
    def initialize(self, auth: HubAuth, data: Path):
        self.auth, self.data = auth, data

    def write_error(self, status_code, **kwargs):
        error = kwargs.get("exc_info", (None, None))[1]
        self.finish({"error": getattr(error, "log_message", None) or self._reason})

    async def owner(self) -> dict:
        """The model of the token's owner (name, kind, scopes), from the hub."""
        kind, _, token = self.request.headers.get("Authorization", "").partition(" ")
        if kind.lower() not in ("token", "bearer") or not token.strip():
            raise web.HTTPError(401, "send a JupyterHub API token: Authorization: token <token>")
        model = await self.auth.user_for_token(token.strip(), use_cache=False, sync=False)
        if not model:
            raise web.HTTPError(403, "the hub does not know this token")
        return model

    async def post(self, name: str):
        model = await self.owner()
        if model.get("kind", "user") != "user" or model.get("name") != name or not NAME.match(name):
            raise web.HTTPError(403, f"a token of {name!r} may send {name!r}'s progress, not this one")
        body = self.request.body
        if len(body) > LIMIT:
            raise web.HTTPError(413, f"progress file over {LIMIT} bytes")
        self.data.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self.data, prefix=f".{name}.", delete=False) as out:
            out.write(body)
        os.replace(out.name, self.data / f"{name}.jsonl")     # whole, never half-written
        self.finish({"stored": len(body)})

    async def get(self, name: str = ""):
        model = await self.owner()
        if "admin:users" not in model.get("scopes", ()):
            raise web.HTTPError(403, "reading the room's progress needs an admin's token (scope admin:users): "
                                     "make one on the hub's token page, /hub/token")
        learners = {path.stem: path.read_text(encoding="utf-8", errors="replace")
                    for path in sorted(self.data.glob("*.jsonl"))}
        self.finish({"learners": learners, "users": await self.hub_users()})

    async def hub_users(self) -> list:
        """Every user of the hub who is not an admin (this service's role: list:users, read:users)."""
        names, offset, client = [], 0, httpclient.AsyncHTTPClient()
        while True:
            answer = await client.fetch(f"{self.auth.api_url}/users?limit=200&offset={offset}",
                                        headers={"Authorization": f"token {self.auth.api_token}"})
            page = json.loads(answer.body)
            names += [user["name"] for user in page if user.get("kind", "user") == "user" and not user.get("admin")]
            if len(page) < 200:
                return names
            offset += len(page)


def main():
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/cutekit-progress/")
    address = urlsplit(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    data = Path(os.environ.get("CUTEKIT_PROGRESS_DATA", "cutekit-progress"))
    auth = HubAuth(cache_max_age=0)
    settings = {"auth": auth, "data": data}
    app = web.Application([(rf"{prefix}learners/?", Progress, settings),
                           (rf"{prefix}learners/([^/]+)", Progress, settings)])
    # on a cluster the hub's Service sends the kernels' requests to the hub pod: listen on every address there
    app.listen(address.port or 80, os.environ.get("CUTEKIT_PROGRESS_LISTEN") or address.hostname)
    ioloop.IOLoop.current().start()


if __name__ == "__main__":
    main()
