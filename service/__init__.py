"""The HTTP service (FastAPI + uvicorn): a shell around the kelime core. Installed as
`kelime.service`."""
