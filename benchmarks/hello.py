"""The baseline of benchmarks/validate.py: FastAPI's hello world, served like kelime."""

from fastapi import FastAPI


def create_app() -> FastAPI:
    app = FastAPI()

    @app.get("/hello")
    async def hello():
        return {"message": "Hello World"}

    return app
