"""`--output-format sarif`: a SARIF 2.1.0 log, for code scanning (GitHub's upload-sarif).

Built with `pydantic-sarif`, whose model is generated from the SARIF 2.1.0 JSON schema
(required members, enumerations and bounds are checked as the log is built, unknown
members refused): one rule descriptor per rule name that occurs (id, short description,
and the rule's help from the guide's catalogue as text and markdown; a link to the guide
only where its address is known), one result per finding with its physical location (and,
for a value inherited from another file, that file's line as a related location).
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

from nemo_rl_workers.findings.catalogue import guide_url, help_for
from nemo_rl_workers.findings.results import Finding, Place, Results

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "nemo-rl-workers"


def _version() -> str:
    try:
        return metadata.version("nemo-rl-worker-contracts")
    except metadata.PackageNotFoundError:
        return "0"


def artifact_uri(file: str) -> str:
    """A URI reference for `file`: relative ones stay relative (to the checkout, as code
    scanning expects), absolute ones become file: URIs; both percent-encoded."""
    path = Path(file)
    if path.is_absolute():
        return path.as_uri() if file.isprintable() else "file://" + quote(file, errors="replace")
    return quote(file.replace(os.sep, "/"), errors="replace")


def render(results: Results) -> str:
    from pydantic_sarif import model as sarif

    findings = results.annotations()
    rule_ids = list(dict.fromkeys(f.rule for f in findings))
    descriptors = []
    for rule in rule_ids:
        found = help_for(rule)
        descriptors.append(sarif.ReportingDescriptor(
            id=rule,
            name=rule,
            shortDescription=sarif.MultiformatMessageString(text=found.short),
            help=sarif.MultiformatMessageString(text=found.text, markdown=found.markdown),
            helpUri=found.uri,
        ))

    def physical(place: Place) -> Any:
        return sarif.PhysicalLocation(
            artifactLocation=sarif.ArtifactLocation(uri=artifact_uri(place.file)),
            region=sarif.Region(startLine=place.line) if place.line else None,
        )

    def result(finding: Finding) -> Any:
        locations = []
        if finding.file is not None:
            locations.append(sarif.Location(
                physicalLocation=physical(Place(finding.file, finding.line))))
        # The subject is the location; where an inherited value is written is related.
        related = [] if finding.value_from is None else [sarif.Location(
            id=0, physicalLocation=physical(finding.value_from),
            message=sarif.Message(text="the value, inherited through defaults:, is written here"),
        )]
        return sarif.Result(
            ruleId=finding.rule,
            ruleIndex=rule_ids.index(finding.rule),
            level=sarif.Level(finding.severity),
            message=sarif.Message(text=finding.text),
            locations=locations,
            relatedLocations=related,
        )

    log = sarif.StaticAnalysisResultsFormatSarifVersion210JsonSchema(
        **{"$schema": SCHEMA_URI},
        version=sarif.Version("2.1.0"),
        runs=[sarif.Run(
            tool=sarif.Tool(driver=sarif.ToolComponent(
                name=TOOL, version=_version(), informationUri=guide_url(), rules=descriptors,
            )),
            invocations=[sarif.Invocation(
                executionSuccessful=not any(c.error is not None for c in results.cases),
            )],
            results=[result(f) for f in findings],
            # Which NeMo-RL was judged: a verdict is only true of a revision.
            properties=(sarif.PropertyBag(nemo_rl=results.nemo_rl)
                        if results.nemo_rl is not None else None),
        )],
    )
    # Members left at the schema's defaults are left out (an empty list, -1 indices).
    dumped: str = log.model_dump_json(
        by_alias=True, exclude_none=True, exclude_defaults=True, indent=2
    )
    return dumped + "\n"
