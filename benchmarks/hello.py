"""The baseline of benchmarks/validate.py: FastAPI's hello world, served like kelime."""

from fastapi import FastAPI


def create_app() -> FastAPI:
    app = FastAPI()

    @app.get("/hello")
    async def hello():
        return {"message": "Hello World"}

    return app


def create_bare():
    """A bare ASGI app (no framework): reads the request's body and answers a fixed small
    JSON, whatever the path. The floor of benchmarks/serving.py."""

    async def app(scope, receive, send):
        if scope["type"] != "http":  # lifespan: nothing to start
            message = await receive()
            while message["type"] != "lifespan.shutdown":
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                message = await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", b"11")]})
        await send({"type": "http.response.body", "body": b'{"ok":true}'})

    return app
