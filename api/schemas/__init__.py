"""Request and response bodies of the routes that have many (one module per resource, named as its
routes module); the bases they derive from are api/models.py."""
