//! W3C extended logs (IIS, CloudFront). (Placeholder until the extractor lands.)
use super::{Extracted, Field, Line, LineError};
#[derive(Clone, Debug)]
pub struct W3cExtractor;
impl W3cExtractor {
    pub fn new(_cloudfront: bool) -> Self { W3cExtractor }
    pub fn extract(&mut self, _line: &[u8], _field: Field, out: &mut Extracted) -> Line { out.clear(); Line::Error(LineError::Malformed, 0) }
    pub fn is_fields_line(line: &[u8]) -> bool { line.starts_with(b"#Fields:") }
}
