from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from audit import api as audit_api
from casino import health
from casino.disputes import api as disputes_api
from casino.floor import api as floor_api
from casino.people import api as people_api
from casino.people.views import account_setup_view
from casino.police import api as police_api
from casino.reports import api as reports_api
from shoes import api as shoes_api

api_v1 = [
    path("token", people_api.TokenObtain.as_view(), name="api-token"),
    path("logout", people_api.Logout.as_view(), name="api-logout"),
    path("tokens", people_api.TokenList.as_view(), name="api-tokens"),
    path("me", people_api.Me.as_view(), name="me"),
    path("audit/events", audit_api.AuditEventList.as_view(), name="audit-events"),
    path("audit/verify", audit_api.ChainVerify.as_view(), name="audit-verify"),
    path("anomalies", audit_api.AnomalyList.as_view(), name="anomalies"),
    path("anomalies/<int:pk>", audit_api.AnomalyDetail.as_view(), name="anomaly"),
    path(
        "anomalies/<int:pk>/reviews", audit_api.AnomalyReviewCreate.as_view(), name="anomaly-review"
    ),
    path("packs", shoes_api.PackList.as_view(), name="packs"),
    path("packs/receive", shoes_api.PackReceive.as_view(), name="pack-receive"),
    path("packs/<int:pk>", shoes_api.PackDetail.as_view(), name="pack"),
    path("packs/<int:pk>/store", shoes_api.PackStore.as_view(), name="pack-store"),
    path("packs/<int:pk>/verification", shoes_api.PackVerify.as_view(), name="pack-verify"),
    path("packs/<int:pk>/open", shoes_api.PackOpen.as_view(), name="pack-open"),
    path("packs/<int:pk>/shuffles", shoes_api.PackShuffle.as_view(), name="pack-shuffle"),
    path("packs/<int:pk>/cut", shoes_api.PackCut.as_view(), name="pack-cut"),
    path("packs/<int:pk>/pass", shoes_api.PackPass.as_view(), name="pack-pass"),
    path("packs/<int:pk>/replacement", shoes_api.PackReplace.as_view(), name="pack-replace"),
    path("packs/<int:pk>/retire", shoes_api.PackRetire.as_view(), name="pack-retire"),
    path("packs/<int:pk>/destroy", shoes_api.PackDestroy.as_view(), name="pack-destroy"),
    path("register/visas", shoes_api.RegisterVisaCreate.as_view(), name="register-visa"),
    path("tables", floor_api.TableList.as_view(), name="tables"),
    path("tables/<int:number>/settings", floor_api.TableSettings.as_view(), name="table-settings"),
    path("reglements", floor_api.ReglementList.as_view(), name="reglements"),
    path("reglements/post", floor_api.ReglementPost.as_view(), name="reglement-post"),
    path("counts", floor_api.CountRecord.as_view(), name="counts"),
    path("counts/<int:pk>/countersign", floor_api.CountCountersign.as_view(), name="count-sign"),
    path(
        "transfers/<int:pk>/countersign",
        floor_api.TransferCountersign.as_view(),
        name="transfer-sign",
    ),
    path("shifts", floor_api.ShiftOpen.as_view(), name="shift-open"),
    path("shifts/<int:pk>", floor_api.ShiftDetail.as_view(), name="shift"),
    path("shifts/<int:pk>/fills", floor_api.ShiftFill.as_view(), name="shift-fill"),
    path("shifts/<int:pk>/credits", floor_api.ShiftCredit.as_view(), name="shift-credit"),
    path("shifts/<int:pk>/close", floor_api.ShiftClose.as_view(), name="shift-close"),
    path("shifts/<int:pk>/duties", floor_api.DutyAssign.as_view(), name="duty-assign"),
    path("duties/<int:pk>/end", floor_api.DutyOff.as_view(), name="duty-end"),
    path("disputes", disputes_api.DisputeList.as_view(), name="disputes"),
    path("disputes/raise", disputes_api.DisputeRaise.as_view(), name="dispute-raise"),
    path("disputes/<int:pk>", disputes_api.DisputeDetail.as_view(), name="dispute"),
    path("disputes/<int:pk>/evidence", disputes_api.EvidenceAdd.as_view(), name="dispute-evidence"),
    path("disputes/<int:pk>/review", disputes_api.DisputeReview.as_view(), name="dispute-review"),
    path("disputes/<int:pk>/decide", disputes_api.DisputeDecide.as_view(), name="dispute-decide"),
    path(
        "disputes/<int:pk>/approve", disputes_api.DecisionApprove.as_view(), name="dispute-approve"
    ),
    path("disputes/<int:pk>/refuse", disputes_api.DecisionRefuse.as_view(), name="dispute-refuse"),
    path("disputes/<int:pk>/appeal", disputes_api.DisputeAppeal.as_view(), name="dispute-appeal"),
    path(
        "disputes/<int:pk>/withdraw",
        disputes_api.DisputeWithdraw.as_view(),
        name="dispute-withdraw",
    ),
    path("police/observations", police_api.Observations.as_view(), name="observations"),
    path("reports", reports_api.ReportList.as_view(), name="reports"),
    path("reports/<int:pk>/pdf", reports_api.ReportPdf.as_view(), name="report-pdf"),
    path("reports/<int:pk>/export", reports_api.ReportExport.as_view(), name="report-export"),
    path(
        "police/observations/<int:pk>/follow-up",
        police_api.FollowUp.as_view(),
        name="observation-follow-up",
    ),
    path("coups", floor_api.CoupOpen.as_view(), name="coup-open"),
    path("coups/list", floor_api.CoupList.as_view(), name="coups"),
    path("coups/batch", floor_api.CoupBatch.as_view(), name="coup-batch"),
    path("coups/<int:pk>", floor_api.CoupDetail.as_view(), name="coup"),
    path("coups/<int:pk>/stakes", floor_api.StakePlace.as_view(), name="stake-place"),
    path(
        "coups/<int:pk>/close-betting",
        floor_api.CoupCloseBetting.as_view(),
        name="coup-close-betting",
    ),
    path("coups/<int:pk>/cards", floor_api.CoupCard.as_view(), name="coup-card"),
    path("coups/<int:pk>/settle", floor_api.CoupSettle.as_view(), name="coup-settle"),
    path("stakes/<int:pk>/withdraw", floor_api.StakeWithdraw.as_view(), name="stake-withdraw"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
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
