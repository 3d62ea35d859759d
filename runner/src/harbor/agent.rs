//! The agent as Harbor records it: its id, its manifest entry and the `agent.toml` that
//! `pack --agent` reads.

use bundle::Agent;

use super::format::AgentInfo;

/// A slug for the agent's id: `openhands` + `anthropic/claude-sonnet-4-5` →
/// `openhands-claude-sonnet-4-5`.
pub(super) fn agent_id(agent: &AgentInfo) -> String {
    let model = agent.model_info.as_ref().map(|m| m.name.rsplit('/').next().unwrap_or(&m.name).to_owned());
    let raw =
        [Some(agent.name.clone()), model].into_iter().flatten().collect::<Vec<_>>().join("-").to_lowercase();
    let mut id = String::new();
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '-' };
        if !(c == '-' && (id.is_empty() || id.ends_with('-'))) {
            id.push(c);
        }
    }
    let id: String = id.trim_end_matches('-').chars().take(64).collect();
    if id.is_empty() { "harbor-agent".to_owned() } else { id }
}

pub(super) fn agent_of(info: &AgentInfo) -> Agent {
    let model = info.model_info.as_ref();
    Agent {
        id: agent_id(info),
        framework: info.name.clone(),
        framework_version: Some(info.version.clone()).filter(|v| !v.is_empty()),
        model: model.map_or_else(
            || "unknown".to_owned(),
            |m| m.name.rsplit('/').next().unwrap_or(&m.name).to_owned(),
        ),
        model_id: model.map(|m| match &m.provider {
            Some(p) if !m.name.contains('/') => format!("{p}/{}", m.name),
            _ => m.name.clone(),
        }),
        display_name: None,
        url: None,
    }
}

pub(super) fn describe(agent: &AgentInfo) -> String {
    match &agent.model_info {
        Some(m) => format!("`{}` with model `{}`", agent.name, m.name),
        None => format!("`{}`", agent.name),
    }
}

/// The agent file `pack --agent` reads, from what Harbor recorded; edit it before packing.
pub(super) fn agent_toml(agent: &Agent) -> String {
    let fields = toml::to_string(agent).expect("an agent is a TOML table");
    format!("# The agent as Harbor recorded it; check the names before `rexbench pack`.\n{fields}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harbor::format::ModelInfo;

    #[test]
    fn agent_ids_are_slugs() {
        let info = |name: &str, model: Option<&str>| AgentInfo {
            name: name.into(),
            version: "1.4.0".into(),
            model_info: model.map(|m| ModelInfo { name: m.into(), provider: Some("anthropic".into()) }),
        };
        assert_eq!(agent_id(&info("openhands", Some("claude-sonnet-4-5"))), "openhands-claude-sonnet-4-5");
        assert_eq!(
            agent_id(&info("Claude Code", Some("anthropic/Claude Opus 4.5"))),
            "claude-code-claude-opus-4.5"
        );
        assert!(bundle::is_slug(&agent_id(&info("!!", None))));
        let agent = agent_of(&info("openhands", Some("claude-sonnet-4-5")));
        assert_eq!(agent.model_id.as_deref(), Some("anthropic/claude-sonnet-4-5"));
        let parsed: Agent = toml::from_str(&agent_toml(&agent)).unwrap();
        assert_eq!(parsed, agent);
    }
}
