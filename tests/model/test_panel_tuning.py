"""The per-update costs the app removes from Panel and Bokeh, and what must not change."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from bokeh.core.property.bases import Property, validation_on
from bokeh.core.property.singletons import Intrinsic, Undefined
from bokeh.core.validation.check import check_integrity
from bokeh.document import Document
from bokeh.settings import SettingProvenance, settings

import app.served.session
from app.page.frames import unpacked_frame
from app.served.session import Session
from app.server.panel_tuning import (
    DIAGNOSTICS_VARIABLE,
    HOT_SETTINGS,
    VALIDATION_VARIABLE,
    fix_hot_settings,
    skip_bokeh_error_diagnostics,
    skip_document_validation,
)
from app.simulation.presets import PRESETS
from app.simulation.spec import D_K_GRID, VIEWS


def served(app: Session) -> Document:
    """``app``'s page in a Bokeh document, as a session holds it (Panel widgets then
    update their models)."""
    document = Document()
    document.add_root(app.page.get_root(document))
    return document


def every_kind_of_move(app: Session) -> None:
    """Each control moved at least once, presets included."""
    state = app.state
    for d_k in (1, 5, 1024, D_K_GRID[10]):
        state.d_k = d_k
    for temperature in (0.05, 20.0, 1.25):
        state.temperature = temperature
    for n in (2, 1024, 48):
        state.n = n
    state.scaled = False
    for view in VIEWS:
        state.view = view
    state.causal = True
    state.row = 47
    state.seed = 7
    state.resample()
    for preset in PRESETS:
        state.preset = preset


def test_views_update_without_bokeh_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    app = Session()
    seen: list[bool] = []
    update = app.figures.update

    def spy(*args: object) -> None:
        seen.append(validation_on())
        update(*args)

    monkeypatch.setattr(app.figures, "update", spy)
    sequence = app.figures.sequence
    app.state.temperature = 2.0
    assert seen == [False]
    assert app.figures.sequence == sequence + 1, "the spied update sent its frame"
    assert validation_on(), "validation is back on after the update"


def test_every_move_sets_values_bokeh_accepts_as_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The app skips Bokeh's validation on moves; with it on, no value set on a move is
    invalid, nor valid only after one of Bokeh's conversions (a str for a Title, say),
    which validation alone makes and which would be lost without it."""
    checks: list[bool] = []
    converted: list[str] = []

    def keep_validating(value: bool) -> contextlib.AbstractContextManager:
        checks.append(validation_on())
        return contextlib.nullcontext()

    prepare_value = Property.prepare_value

    def checked(self: Property, owner: object, name: str, value: object, **hint: object) -> object:
        if value is not Intrinsic and value is not Undefined and not self.is_valid(value):
            converted.append(f"{type(owner).__name__}.{name} = {value!r:.60}")
        return prepare_value(self, owner, name, value, **hint)

    simulation = Session()
    document = served(simulation)
    monkeypatch.setattr(app.served.session, "validate", keep_validating)
    monkeypatch.setattr(Property, "prepare_value", checked)
    every_kind_of_move(simulation)
    assert len(checks) > 20 and all(checks)
    assert converted == []
    # The frames went into the rendered page's model, the last for the state as it is.
    # The lesson's component (the one with lazy sections to open) draws the row.
    rendered = {
        hasattr(model.data, "opened"): unpacked_frame(model.data.frame)
        for model in document.models
        if hasattr(getattr(model, "data", None), "frame") and model.data.frame
    }
    first, why = rendered[False], rendered[True]
    assert first["sequence"] == simulation.figures.sequence > 1
    assert why["sequence"] == simulation.lesson.drawn.sequence > 1
    assert first["state"]["n"] == why["state"]["n"] == simulation.state.n == 48
    document.clear()


@pytest.fixture
def diagnostics_setting() -> Iterator[None]:
    """Bokeh's error-diagnostics setting, restored after the test."""
    yield
    settings.perform_error_diagnostics.unset_value()


def test_bokeh_error_diagnostics_are_skipped(
    diagnostics_setting: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DIAGNOSTICS_VARIABLE, raising=False)
    skip_bokeh_error_diagnostics()
    assert settings.perform_error_diagnostics() is False
    with pytest.raises(AttributeError, match="unexpected attribute 'valeu'"):
        _ = Session().page.get_root(Document()).valeu


def test_the_environment_still_decides_bokeh_error_diagnostics(
    diagnostics_setting: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DIAGNOSTICS_VARIABLE, "true")
    skip_bokeh_error_diagnostics()
    assert settings.perform_error_diagnostics() is True


@pytest.fixture
def validation_setting() -> Iterator[None]:
    """Bokeh's document-validation setting, restored after the test."""
    yield
    settings.perform_document_validation.unset_value()


def test_bokeh_document_validation_is_skipped_unless_the_environment_asks(
    validation_setting: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VALIDATION_VARIABLE, raising=False)
    skip_document_validation()
    assert settings.perform_document_validation() is False
    settings.perform_document_validation.unset_value()
    monkeypatch.setenv(VALIDATION_VARIABLE, "true")
    skip_document_validation()
    assert settings.perform_document_validation() is True


@pytest.mark.parametrize("served", [True, False], ids=["first screen", "with the lesson"])
@pytest.mark.parametrize("embed", [True, False], ids=["embed", "page"])
def test_pages_pass_bokehs_document_checks(
    served: bool, embed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What Bokeh would check for each arriving session, checked here once per kind of page."""
    monkeypatch.setattr(app.served.session, "served", lambda: served)
    doc = Document()
    doc.add_root(Session(embed=embed).page.get_root(doc))
    issues = check_integrity(list(doc.models))
    assert not issues.error and not issues.warning, issues


@pytest.fixture
def hot_settings() -> Iterator[None]:
    """Bokeh's hot settings as they were, restored after the test."""
    before = {name: getattr(settings, name).get_value_with_provenance() for name in HOT_SETTINGS}
    yield
    for name, (value, provenance) in before.items():
        setting = getattr(settings, name)
        if provenance is SettingProvenance.USER_SET:
            setting.set_value(value)
        else:
            setting.unset_value()


def test_hot_settings_keep_the_value_bokeh_resolves(
    hot_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in HOT_SETTINGS:
        getattr(settings, name).unset_value()
    monkeypatch.setenv("BOKEH_SIMPLE_IDS", "no")
    resolved = {name: getattr(settings, name)() for name in HOT_SETTINGS}
    fix_hot_settings()
    for name in HOT_SETTINGS:
        value, provenance = getattr(settings, name).get_value_with_provenance()
        assert (value, provenance) == (resolved[name], SettingProvenance.USER_SET)
    assert settings.simple_ids() is False
    # A value set in Python is left alone.
    settings.pretty.set_value(True)
    fix_hot_settings()
    assert settings.pretty() is True
