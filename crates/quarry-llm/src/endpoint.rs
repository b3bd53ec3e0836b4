//! An OpenAI-compatible chat endpoint as the model: `POST {base}/chat/completions` with one
//! user message, temperature 0, the answer from `choices[0].message.content`.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::{LanguageModel, MAX_REPLY_BYTES};

#[derive(Debug)]
pub struct EndpointModel {
    url: String,
    model: String,
    api_key: Option<String>,
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

impl EndpointModel {
    /// `base` is the API base (`http://localhost:11434/v1`) or the full chat URL. No request is
    /// made here.
    pub fn new(
        base: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<Self> {
        let trimmed = base.trim().trim_end_matches('/');
        if !(trimmed.starts_with("http://") || trimmed.starts_with("https://")) {
            bail!("llm.endpoint `{base}` is not an http(s) URL (e.g. http://localhost:11434/v1)");
        }
        if model.trim().is_empty() {
            bail!("the llm endpoint needs a model name: quarry config set llm.model NAME");
        }
        let url = if trimmed.ends_with("/chat/completions") {
            trimmed.to_string()
        } else {
            format!("{trimmed}/chat/completions")
        };
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(Duration::from_secs(3))))
            .http_status_as_error(false)
            .build();
        Ok(Self {
            url,
            model: model.to_string(),
            api_key,
            agent: config.into(),
        })
    }
}

impl LanguageModel for EndpointModel {
    fn describe(&self) -> String {
        format!("endpoint:{}#{}", self.url, self.model)
    }

    fn complete(&self, prompt: &str) -> Result<String> {
        let body = serde_json::json!({
            "model": self.model,
            "messages": [{ "role": "user", "content": prompt }],
            "temperature": 0,
        });
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(&body)
            .with_context(|| format!("llm endpoint {} did not answer", self.url))?;
        let status = response.status();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES as u64)
            .read_to_string()
            .with_context(|| format!("reading the answer of llm endpoint {}", self.url))?;
        if !status.is_success() {
            let head: String = text.chars().take(300).collect();
            bail!(
                "llm endpoint {} answered {status}: {}",
                self.url,
                head.trim()
            );
        }
        let parsed: ChatResponse = serde_json::from_str(&text).with_context(|| {
            format!(
                "llm endpoint {} answered something that is not a chat completion",
                self.url
            )
        })?;
        match parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
        {
            Some(content) if !content.trim().is_empty() => Ok(content),
            _ => bail!("llm endpoint {} answered no message", self.url),
        }
    }
}
