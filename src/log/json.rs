//! JSON access logs: one object per line. (Placeholder until the extractor lands.)
use super::{Extracted, Field, Line, LineError};
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct JsonPaths {
    pub target: Option<String>,
    pub request_line: Option<String>,
    pub host: Option<String>,
    pub scheme: Option<String>,
    pub referer: Option<String>,
    pub method: Option<String>,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonPreset { Nginx, Caddy, Traefik }
impl JsonPreset { pub fn paths(self) -> JsonPaths { JsonPaths::default() } pub fn name(self) -> &'static str { "nginx" } }
impl std::str::FromStr for JsonPreset { type Err = String; fn from_str(_: &str) -> Result<Self, String> { Ok(JsonPreset::Nginx) } }
#[derive(Clone, Debug)]
pub struct JsonExtractor;
impl JsonExtractor {
    pub fn new(_paths: JsonPaths) -> Self { JsonExtractor }
    pub fn detect_preset<'a>(_s: impl IntoIterator<Item = &'a [u8]>) -> Option<JsonPreset> { None }
    pub fn extract(&mut self, _line: &[u8], _field: Field, out: &mut Extracted) -> Line { out.clear(); Line::Error(LineError::Malformed, 0) }
}
