"""The pit's pages: the floor operated in the admin by the people on duty (the table page, the
séance, the cage, the card room, each person's home). Each act is one request through the same
services as the API; pages are rendered on the server and updated in part by htmx
(``static/pit/htmx.min.js``, htmx 2.0.11, Zero-Clause BSD, served from the project)."""
