"""The HTTP routes, one module per group; each route is a thin shell around the core."""
