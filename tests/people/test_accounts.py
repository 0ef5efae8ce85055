"""People's accounts: each finding of issue 11 written as the attack, refused, with nothing changed."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.contrib.admin.models import CHANGE
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import RequestFactory
from django_otp.plugins.otp_totp.models import TOTPDevice

from audit.models import AuditEvent
from casino import clock
from casino.errors import Conflict, RoleRequired
from casino.people import services
from casino.people.errors import PasswordRefused, SetupCodeInvalid
from casino.people.models import SetupCode, StaffProfile
from casino.people.roles import Role
from casino.people.services import roles_of
from tests.actors import PASSWORD, admin_client, hire, set_up


def events() -> int:
    return AuditEvent.objects.count()


def snapshot(user: User) -> tuple:
    user = User.objects.get(pk=user.pk)
    profile = StaffProfile.objects.get(user=user)
    return (
        user.password,
        user.is_active,
        user.is_superuser,
        sorted(user.groups.values_list("name", flat=True)),
        profile.employer,
        profile.full_name,
        sorted(TOTPDevice.objects.filter(user=user).values_list("key", flat=True)),
    )


# --- the director and the outside bodies ------------------------------------------------------


@pytest.mark.parametrize("who", ["commissaire", "inspecteur"])
def test_the_director_cannot_take_over_an_outside_body(cast, who):
    outsider = getattr(cast, who)
    before, count = snapshot(outsider), events()
    # There is no admin page that sets someone's password, nor a form field for it.
    client = admin_client(cast.directeur)
    page = client.post(
        f"/admin/auth/user/{outsider.pk}/password/",
        {"password1": "x" * 12, "password2": "x" * 12},
        follow=True,
    )
    assert b'name="password1"' not in page.content
    page = client.post(
        f"/admin/auth/user/{outsider.pk}/change/",
        {"username": who, "is_active": "", "password": "x", "employer": "casino"},
    )
    assert page.status_code == 403
    # Nor may he issue a setup code for them, or activate them.
    for act in (services.staff_issue_setup_code, services.staff_activate):
        with pytest.raises((RoleRequired, Conflict)):
            act(actor=cast.directeur, user=outsider)
    assert snapshot(outsider) == before
    assert events() == count + 0  # the admin login itself is not an event


def test_a_reset_of_the_commissioner_goes_through_another_commissioner(cast):
    second = services.staff_create(
        actor=cast.directeur, username="commissaire2", full_name="Second", roles=[Role.COMMISSAIRE]
    )
    assert not second.is_active  # opened by the director, waiting for the police
    with pytest.raises(RoleRequired):
        services.staff_activate(actor=cast.directeur, user=second)
    set_up(second, services.staff_activate(actor=cast.commissaire, user=second))

    # The director asks: the account closes, with no password, no device, no live token.
    assert services.staff_reset_credentials(actor=cast.directeur, user=cast.commissaire) is None
    commissaire = User.objects.get(pk=cast.commissaire.pk)
    assert not commissaire.is_active
    assert not commissaire.has_usable_password()
    assert not TOTPDevice.objects.filter(user=commissaire).exists()
    count = events()
    with pytest.raises(RoleRequired):
        services.staff_activate(actor=cast.directeur, user=commissaire)
    with pytest.raises(RoleRequired):  # nobody activates themselves
        services.staff_activate(actor=commissaire, user=commissaire)
    assert events() == count
    assert not User.objects.get(pk=commissaire.pk).is_active
    # Another commissioner activates; the code is his to hand over, the person enrols.
    code = services.staff_activate(actor=second, user=commissaire)
    set_up(commissaire, code, password="a-new-secret-phrase")
    commissaire.refresh_from_db()
    assert commissaire.is_active
    assert commissaire.check_password("a-new-secret-phrase")
    assert AuditEvent.objects.filter(action="staff.activated", actor_id=second.pk).count() == 1


def test_the_comite_is_reset_by_a_setup_code_never_a_password_of_the_director(cast):
    code = services.staff_reset_credentials(actor=cast.directeur, user=cast.comite)
    comite = User.objects.get(pk=cast.comite.pk)
    assert code
    assert not comite.has_usable_password()
    assert not TOTPDevice.objects.filter(user=comite).exists()  # the person enrols their own
    event = AuditEvent.objects.filter(action="staff.credentials_reset").latest("seq")
    assert event.actor_id == cast.directeur.pk
    assert event.subject_id == str(comite.pk)


def test_the_director_is_reset_by_the_comite_or_another_director_never_himself(cast):
    with pytest.raises(RoleRequired):
        services.staff_reset_credentials(actor=cast.directeur, user=cast.directeur)
    with pytest.raises(RoleRequired):
        services.staff_reset_credentials(actor=cast.chef, user=cast.directeur)
    assert User.objects.get(pk=cast.directeur.pk).check_password(PASSWORD)
    assert services.staff_reset_credentials(actor=cast.comite, user=cast.directeur)


def test_the_director_cannot_make_an_employee_a_commissioner(cast):
    before, count = snapshot(cast.croupier), events()
    for roles in ([Role.COMMISSAIRE], [Role.INSPECTEUR]):
        with pytest.raises(RoleRequired):
            services.staff_set_roles(actor=cast.directeur, user=cast.croupier, roles=roles)
    page = admin_client(cast.directeur).post(
        f"/admin/auth/user/{cast.croupier.pk}/act/roles/", {"roles": ["commissaire"]}
    )
    assert page.status_code == 200
    assert b"pas du personnel du casino" in page.content
    assert snapshot(cast.croupier) == before
    assert events() == count


def test_the_employer_is_never_edited(cast):
    before = snapshot(cast.croupier)
    page = admin_client(cast.directeur).post(
        f"/admin/auth/user/{cast.croupier.pk}/change/",
        {"staff_profile-0-employer": "police", "username": "croupier"},
    )
    assert page.status_code == 403
    # Around the services: the database refuses it.
    with pytest.raises(IntegrityError, match="employer"), transaction.atomic():
        StaffProfile.objects.filter(user=cast.croupier).update(employer="police")
    assert snapshot(cast.croupier) == before


def test_a_body_keeps_the_role_it_was_opened_with(cast):
    before = snapshot(cast.commissaire)
    with pytest.raises(RoleRequired):
        services.staff_set_roles(actor=cast.directeur, user=cast.commissaire, roles=[])
    assert snapshot(cast.commissaire) == before


# --- the superuser ----------------------------------------------------------------------------


def test_a_superuser_cannot_grant_himself_or_anyone_a_role(cast):
    count = events()
    with pytest.raises(RoleRequired):
        services.staff_set_roles(actor=cast.root, user=cast.root, roles=[Role.DIRECTEUR])
    with pytest.raises(RoleRequired):
        services.staff_set_roles(actor=cast.root, user=cast.croupier, roles=[Role.CHEF_DE_PARTIE])
    with pytest.raises(RoleRequired):
        services.staff_set_roles(actor=cast.directeur, user=cast.root, roles=[Role.COMITE])
    with pytest.raises(RoleRequired):
        services.staff_create(actor=cast.root, username="mine", full_name="Mine")
    # Around the services: the database refuses a superuser's role, and a role-holder's promotion.
    with pytest.raises(IntegrityError, match="holds no role"), transaction.atomic():
        cast.root.groups.add(Group.objects.get(name="directeur"))
    with pytest.raises(IntegrityError, match="holds no role"), transaction.atomic():
        User.objects.filter(pk=cast.directeur.pk).update(is_superuser=True)
    assert roles_of(User.objects.get(pk=cast.root.pk)) == frozenset()
    assert roles_of(cast.croupier) == {Role.CROUPIER}
    assert not User.objects.filter(username="mine").exists()
    assert events() == count


def test_a_superuser_sees_no_token_and_no_second_factor_in_the_admin(cast, api):
    api(cast.tailleur)  # someone has a token
    client = admin_client(cast.root)
    assert client.get("/admin/").status_code == 200
    for url in (
        "/admin/people/apitoken/",
        "/admin/authtoken/token/",
        "/admin/authtoken/tokenproxy/",
        "/admin/otp_totp/totpdevice/",
        "/admin/people/setupcode/",
    ):
        assert client.get(url).status_code == 404, url
    page = client.get(f"/admin/auth/user/{cast.tailleur.pk}/change/").content.decode()
    assert "TOTP" in page
    assert "password" in page
    assert cast.tailleur.password not in page


def test_every_admin_act_is_in_the_audit_chain(cast):
    from django.contrib import admin

    request = RequestFactory().post("/admin/")
    request.user = cast.root
    with transaction.atomic():  # what the admin does after any of its own forms
        admin.site._registry[User].log_change(request, cast.outsider, "changed something")
    event = AuditEvent.objects.latest("seq")
    assert (event.action, event.actor_id) == ("admin.change", cast.root.pk)
    assert event.subject_type == "auth.user"
    assert event.subject_id == str(cast.outsider.pk)
    from django.contrib.admin.models import LogEntry

    assert LogEntry.objects.filter(user=cast.root, action_flag=CHANGE).count() == 1


def test_the_superuser_changes_his_own_password_through_the_service(cast, api):
    client = admin_client(cast.root)
    response = client.post(
        "/admin/password_change/",
        {
            "old_password": PASSWORD,
            "new_password1": "another-long-phrase",
            "new_password2": "another-long-phrase",
        },
    )
    assert response.status_code == 302
    event = AuditEvent.objects.filter(action="account.password_changed").latest("seq")
    assert event.actor_id == cast.root.pk
    assert User.objects.get(pk=cast.root.pk).check_password("another-long-phrase")
    assert client.get("/admin/").status_code == 200  # still logged in


# --- setup codes ------------------------------------------------------------------------------


def test_a_setup_code_is_single_use(cast):
    user = services.staff_create(actor=cast.directeur, username="new", full_name="New")
    code = services.staff_issue_setup_code(actor=cast.directeur, user=user)
    set_up(user, code)
    user.refresh_from_db()
    password = user.password
    with pytest.raises(SetupCodeInvalid):
        set_up(user, code, password="a-takeover-phrase")
    assert User.objects.get(pk=user.pk).password == password


def test_a_setup_code_expires(cast, monkeypatch, settings):
    user = services.staff_create(actor=cast.directeur, username="new", full_name="New")
    code = services.staff_issue_setup_code(actor=cast.directeur, user=user)
    later = clock.now() + dt.timedelta(hours=settings.SETUP_CODE_HOURS, minutes=1)
    monkeypatch.setattr(clock, "now", lambda: later)
    count = events()
    with pytest.raises(SetupCodeInvalid):
        set_up(user, code)
    assert not User.objects.get(pk=user.pk).has_usable_password()
    assert events() == count


def test_a_new_code_withdraws_the_previous_one(cast):
    user = services.staff_create(actor=cast.directeur, username="new", full_name="New")
    first = services.staff_issue_setup_code(actor=cast.directeur, user=user)
    services.staff_issue_setup_code(actor=cast.directeur, user=user)
    with pytest.raises(SetupCodeInvalid):
        set_up(user, first)
    assert SetupCode.objects.filter(user=user, withdrawn_at=None).count() == 1


def test_a_setup_refuses_a_weak_password_and_a_missing_second_factor(cast):
    user = services.staff_create(
        actor=cast.directeur, username="aud3", full_name="Aud", roles=[Role.AUDITEUR]
    )
    code = services.staff_issue_setup_code(actor=cast.directeur, user=user)
    with pytest.raises(PasswordRefused):
        services.account_setup(username="aud3", code=code, password="short")
    with pytest.raises(services.SecondFactorRequired):
        services.account_setup(username="aud3", code=code, password="a-long-enough-phrase")
    user.refresh_from_db()
    assert not user.has_usable_password()
    assert not TOTPDevice.objects.filter(user=user).exists()


def test_the_setup_page_sets_the_password_and_enrols_the_device(cast, client):
    from tests.actors import login_admin, totp_at

    user = services.staff_create(
        actor=cast.directeur, username="aud3", full_name="Aud", roles=[Role.AUDITEUR]
    )
    code = services.staff_issue_setup_code(actor=cast.directeur, user=user)
    page = client.post("/account/setup/", {"step": "1", "username": "aud3", "code": "WRONG"})
    assert "ne correspondent à aucun code" in page.content.decode()
    page = client.post("/account/setup/", {"step": "1", "username": "aud3", "code": code})
    key = client.session["people_account_setup"]["key"]
    assert "otpauth://totp/" in page.content.decode()
    import time

    form = {"step": "2", "password1": "my-own-phrase-1", "password2": "my-own-phrase-1"}
    page = client.post("/account/setup/", {**form, "otp": "000000"})
    assert "pas le code actuel de" in page.content.decode()
    assert not User.objects.get(pk=user.pk).has_usable_password()
    page = client.post("/account/setup/", {**form, "otp": totp_at(key, int(time.time()) // 30)})
    assert "C'est fait" in page.content.decode()
    login_admin(client, User.objects.get(pk=user.pk), password="my-own-phrase-1")
    assert client.get("/admin/audit/anomaly/").status_code == 200


# --- every service is audited -----------------------------------------------------------------


def test_every_people_service_writes_an_audit_event(cast):
    d = cast.directeur

    def last(action: str) -> AuditEvent:
        return AuditEvent.objects.filter(action=action).latest("seq")

    user = services.staff_create(actor=d, username="new", full_name="New", roles=[Role.CROUPIER])
    assert last("staff.created").actor_id == d.pk
    set_up(user, services.staff_issue_setup_code(actor=d, user=user))
    assert last("staff.setup_code_issued").actor_id == d.pk
    assert last("account.setup_completed").actor_id == user.pk
    services.staff_set_roles(actor=d, user=user, roles=[Role.TAILLEUR])
    assert last("staff.roles_changed").actor_id == d.pk
    services.staff_change_profile(actor=d, user=user, full_name="Newer", licence_number="TA-1")
    assert '"full_name":"Newer"' in last("staff.profile_changed").payload
    services.staff_deactivate(actor=d, user=user, reason="leave")
    assert last("staff.deactivated").actor_id == d.pk
    services.staff_activate(actor=d, user=user)
    assert last("staff.activated").actor_id == d.pk
    services.staff_reset_credentials(actor=d, user=user)
    assert last("staff.credentials_reset").actor_id == d.pk
    services.account_password_change(
        user=cast.chef, old_password=PASSWORD, new_password="chef-new-phrase"
    )
    assert last("account.password_changed").actor_id == cast.chef.pk
    services.maintenance_setup_code(username="root")
    assert last("maintenance.setup_code_issued").actor_id is None


def test_the_profile_never_carries_the_employer(cast):
    with pytest.raises(TypeError):
        services.staff_change_profile(  # type: ignore[call-arg]
            actor=cast.directeur,
            user=cast.chef,
            full_name="X",
            licence_number="",
            employer="police",
        )


# --- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_makes_the_first_people_once(db, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    out = io.StringIO()
    call_command(
        "people_bootstrap",
        "--directeur=dir",
        "--directeur-name=Hélène Marchand",
        "--commissaire=com",
        "--inspecteur=ins",
        stdout=out,
    )
    assert {"dir", "com", "ins"} <= set(out.getvalue().split())
    assert {roles_of(User.objects.get(username=u)) for u in ("dir", "com", "ins")} == {
        frozenset({Role.DIRECTEUR}),
        frozenset({Role.COMMISSAIRE}),
        frozenset({Role.INSPECTEUR}),
    }
    event = AuditEvent.objects.get(action="people.bootstrapped")
    assert event.actor_id is None
    assert event.actor_name == "system"
    count = (User.objects.count(), events())
    with pytest.raises(CommandError, match="already set up"):
        call_command("people_bootstrap", "--directeur=x", "--commissaire=y", "--inspecteur=z")
    assert (User.objects.count(), events()) == count


def test_hire_gives_a_working_login(cast):
    user = hire(cast.directeur, "extra", Role.CROUPIER)
    assert user.check_password(PASSWORD)
    assert user.is_active
