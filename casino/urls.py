from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

from audit import api as audit_api
from casino.people import api as people_api

api_v1 = [
    path("token", obtain_auth_token, name="api-token"),
    path("me", people_api.Me.as_view(), name="me"),
    path("audit/events", audit_api.AuditEventList.as_view(), name="audit-events"),
    path("audit/verify", audit_api.ChainVerify.as_view(), name="audit-verify"),
    path("anomalies", audit_api.AnomalyList.as_view(), name="anomalies"),
    path("anomalies/<int:pk>", audit_api.AnomalyDetail.as_view(), name="anomaly"),
    path(
        "anomalies/<int:pk>/reviews", audit_api.AnomalyReviewCreate.as_view(), name="anomaly-review"
    ),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
]
