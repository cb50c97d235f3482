//! Test guest: 40 capabilities with long titles, outcomes and tags, to test
//! discovery paging and the response bound. Capabilities 0..5 are tagged
//! `retrieval`; capability 7 produces `jacobian:stress/thing@1`.

use jacobian_guest::__private::{self, capability_bindings};
use jacobian_guest::protocol::{CapabilityDescriptor, Example, InputKind, Mode, Outcome, ProducerAssurance, Scope};
use serde_json::json;

const COUNT: usize = 40;

fn descriptor(i: usize) -> CapabilityDescriptor {
    let mut tags: Vec<String> =
        (0..11).map(|t| format!("stress_tag_{t:02}_with_a_very_long_name_to_pad_it_out")).collect();
    if i < 5 {
        tags.push("retrieval".into());
    }
    CapabilityDescriptor {
        id: format!("stress.cap_{i:02}"),
        title: format!(
            "Stress capability number {i} with a deliberately long title that pads the catalog entry {}",
            "x".repeat(60)
        ),
        outcome: format!(
            "an outcome sentence for stress capability {i} that is long on purpose: {}",
            "lorem ipsum ".repeat(20)
        ),
        description: format!("Stress capability {i}. {}", "A long description of nothing in particular. ".repeat(10)),
        tags,
        modes: vec![Mode::Explore],
        input_kind: InputKind::StructuredRequest,
        input_schema: json!({"type": "object", "additionalProperties": false, "properties": {}}),
        output_schema: json!({"type": "object"}),
        examples: vec![Example { title: "no input".into(), steps: Vec::new(), input: json!({}) }],
        checker_roles: Vec::new(),
        artifact_types: if i == 7 { vec!["jacobian:stress/thing@1".into()] } else { Vec::new() },
        accepts: Vec::new(),
        checks: Vec::new(),
    }
}

struct Bundle;

impl capability_bindings::Guest for Bundle {
    fn describe() -> Vec<u8> {
        __private::describe_capabilities(
            __private::provider("jacobian-test-catalog", "0.1.0", "Apache-2.0"),
            (0..COUNT).map(descriptor).collect(),
        )
    }

    fn invoke(_request: Vec<u8>) -> Result<Vec<u8>, String> {
        let outcome = Outcome {
            output: json!({}),
            artifacts: Vec::new(),
            scope: Scope::exhaustive("nothing"),
            qualifiers: Vec::new(),
            assurance: ProducerAssurance::Computed,
            obligations: Vec::new(),
            verification: None,
        };
        serde_json::to_vec(&outcome).map_err(|e| e.to_string())
    }
}

capability_bindings::export!(Bundle with_types_in jacobian_guest::__private::capability_bindings);
