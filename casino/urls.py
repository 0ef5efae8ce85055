from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from audit import api as audit_api
from casino import health
from casino.disputes import api as disputes_api
from casino.floor import api as floor_api
from casino.floor import cage_api
from casino.floor.registry import api_routes
from casino.people import api as people_api
from casino.people.views import account_setup_view
from casino.police import api as police_api
from casino.reports import api as reports_api
from shoes import api as shoes_api

# Each package serves its records: collections and items, and the acts on them.
api_v1 = [
    *people_api.routes,
    *floor_api.routes,
    *cage_api.routes,
    *api_routes(),  # each game's rounds (casino/floor/play/<game>/api.py)
    *shoes_api.routes,
    *disputes_api.routes,
    *police_api.routes,
    *reports_api.routes,
    *audit_api.routes,
]

urlpatterns = [
    # The host's address is the back-office's: there is no public site.
    path("", RedirectView.as_view(pattern_name="admin:index"), name="front-door"),
    path("admin/", admin.site.urls),
    # The language switch in the admin's header posts here (Django's set_language view).
    path("i18n/", include("django.conf.urls.i18n")),
    path("account/setup/", account_setup_view, name="account-setup"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    # For load balancers and process managers (casino/health.py): no login, no session.
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
]

# A URL under /api/ that names nothing is refused in the API's shape, {code, message, where}.
handler404 = "casino.api.errors.not_found"
# A database that cannot be reached outside a view (casino/unavailable.py): 503, not 500.
handler500 = "casino.unavailable.server_error"
