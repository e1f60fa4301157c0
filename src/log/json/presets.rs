//! The JSON layouts of well-known servers and log services: a name and the
//! [`JsonPaths`] of its layout each.

use std::fmt;
use std::str::FromStr;

use super::JsonPaths;
use crate::log::Scheme;

/// The JSON layouts of well-known servers and log services.
///
/// ```
/// use canonurl::log::{Extracted, Field, JsonPreset, Line, LogFormat, Scheme};
/// use canonurl::RecordReader;
///
/// let mut caddy = RecordReader::new(LogFormat::Json, Some(JsonPreset::Caddy.paths()));
/// let mut out = Extracted::default();
/// let line = br#"caddy | {"msg":"handled request","request":{"host":"a.example","uri":"/x?q=\u00e9","tls":{"proto":"h2"}}}"#;
/// assert_eq!(caddy.read(line, Field::Request, &mut out), Line::Record);
/// assert_eq!(out.target(line), "/x?q=é".as_bytes());
/// assert_eq!(out.host, b"a.example");
/// assert_eq!(out.scheme, Some(Scheme::Https));
/// assert_eq!("caddy".parse::<JsonPreset>(), Ok(JsonPreset::Caddy));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum JsonPreset {
    /// Hand-written nginx `log_format ... escape=json` layouts named after
    /// nginx's variables: `request_uri` or `request`, `http_host` or `host`,
    /// `scheme`, `http_referer` (or the common misspelling `http_referrer`),
    /// `request_method`.
    #[cfg_attr(feature = "cli", value(name = "nginx"))]
    Nginx,
    /// Caddy's access log (`http.log.access`): `request.uri`, `request.host`,
    /// `request.method`, `request.headers.Referer[0]`, `https` when
    /// `request.tls` is present.
    #[cfg_attr(feature = "cli", value(name = "caddy"))]
    Caddy,
    /// Traefik's JSON access log (v1 and v2): `RequestPath`, `RequestAddr`
    /// (the Host header with its port; `RequestHost` drops the port),
    /// `RequestScheme` (absent in v1), `RequestMethod`, `request_Referer`.
    #[cfg_attr(feature = "cli", value(name = "traefik"))]
    Traefik,
    /// A Google Cloud Logging `LogEntry` with an `httpRequest` (HTTP(S) load
    /// balancer, Cloud Run, App Engine): `httpRequest.requestUrl`, an
    /// absolute URL, `httpRequest.requestMethod`, `httpRequest.referer`.
    #[cfg_attr(feature = "cli", value(name = "gcp"))]
    Gcp,
    /// Cloudflare Logpush HTTP requests: `ClientRequestURI` (path and
    /// query), `ClientRequestHost`, `ClientRequestScheme`,
    /// `ClientRequestMethod`, `ClientRequestReferer`.
    #[cfg_attr(feature = "cli", value(name = "cloudflare"))]
    Cloudflare,
    /// Azure Application Gateway access log (`ApplicationGatewayAccessLog`):
    /// `properties.originalRequestUriWithArgs` (v2: the path and query as
    /// received) or `properties.requestUri`, `properties.originalHost` or
    /// `properties.host` (rewritable), `properties.sslEnabled` (`on`:
    /// https), `properties.httpMethod`. v1's `requestQuery` holds the
    /// gateway's own parameters and is not read. No referer is logged.
    #[cfg_attr(feature = "cli", value(name = "azure-appgw"))]
    AzureAppGw,
    /// Azure Front Door access log (`FrontDoorAccessLog`):
    /// `properties.requestUri`, an absolute URL, `properties.hostName`,
    /// `properties.requestProtocol`, `properties.httpMethod`,
    /// `properties.referer`.
    #[cfg_attr(feature = "cli", value(name = "azure-frontdoor"))]
    AzureFrontDoor,
    /// AWS WAF web ACL logs: `httpRequest.uri` plus `?` and
    /// `httpRequest.args`, the Host and Referer headers from the
    /// `httpRequest.headers` list, `httpRequest.httpMethod`. The log has no
    /// scheme: `https`, since what WAF guards (CloudFront, ALB, API Gateway,
    /// AppSync, Cognito) is served, or redirected to, over HTTPS.
    #[cfg_attr(feature = "cli", value(name = "aws-waf"))]
    AwsWaf,
    /// Akamai DataStream 2 JSON: `reqPath` (logged without its leading `/`)
    /// plus `?` and `queryStr`, `reqHost`, the scheme from `proto` (`HTTP`
    /// or `HTTPS`) or else `reqPort`, `reqMethod`, `referer`. DataStream
    /// percent-encodes the bytes outside `0x21..=0x7E` and leaves `%`
    /// alone, so the values are kept as they are: decoding could not tell a
    /// `%20` it wrote from one the client sent, and the canonical URL
    /// encodes those bytes again anyway.
    #[cfg_attr(feature = "cli", value(name = "akamai"))]
    Akamai,
    /// Zeek's `http.log` written as JSON: `uri`, `host`, `referrer`,
    /// `method`, and the server port `id.resp_p` (one key with a dot in it)
    /// for the scheme: 443 is https, others http. Zeek writes the bytes it
    /// escapes as `\xHH` and a backslash as itself, so `\x07` in a `uri`
    /// may be either: it is kept as logged.
    #[cfg_attr(feature = "cli", value(name = "zeek"))]
    Zeek,
}

impl JsonPreset {
    /// Every preset, in the order detection prefers them on a tie.
    /// Application Gateway comes before Front Door: both log
    /// `properties.requestUri`, and a record with neither's other fields is
    /// more likely a gateway's (v1 writes `-` for host and TLS).
    pub const ALL: [JsonPreset; 10] = [
        JsonPreset::Nginx,
        JsonPreset::Caddy,
        JsonPreset::Traefik,
        JsonPreset::Gcp,
        JsonPreset::Cloudflare,
        JsonPreset::AzureAppGw,
        JsonPreset::AzureFrontDoor,
        JsonPreset::AwsWaf,
        JsonPreset::Akamai,
        JsonPreset::Zeek,
    ];

    /// The name used on the command line: `nginx`, `caddy`, `aws-waf`, ...
    pub fn name(self) -> &'static str {
        match self {
            JsonPreset::Nginx => "nginx",
            JsonPreset::Caddy => "caddy",
            JsonPreset::Traefik => "traefik",
            JsonPreset::Gcp => "gcp",
            JsonPreset::Cloudflare => "cloudflare",
            JsonPreset::AzureAppGw => "azure-appgw",
            JsonPreset::AzureFrontDoor => "azure-frontdoor",
            JsonPreset::AwsWaf => "aws-waf",
            JsonPreset::Akamai => "akamai",
            JsonPreset::Zeek => "zeek",
        }
    }

    /// The paths of the preset's layout.
    pub fn paths(self) -> JsonPaths {
        let path = |p: &str| Some(p.to_owned());
        match self {
            // `$request_uri` is the target as sent; `$uri` is not used: nginx
            // has already decoded and normalized it. `$http_host` keeps the
            // port the client sent, `$host` is the fallback nginx itself uses.
            // `server_name` is left out: it may be `_` or a wildcard.
            JsonPreset::Nginx => JsonPaths {
                target: path("request_uri"),
                request_line: path("request"),
                host: path("http_host|host"),
                scheme: path("scheme"),
                referer: path("http_referer|http_referrer|referer"),
                method: path("request_method"),
                status: path("status"),
                bytes: path("body_bytes_sent|bytes_sent"),
                time: path("time_iso8601|time_local|msec|time|timestamp"),
                client: path("remote_addr"),
                ..JsonPaths::default()
            },
            // `request.proto` is the HTTP version, not the scheme.
            JsonPreset::Caddy => JsonPaths {
                target: path("request.uri"),
                host: path("request.host"),
                scheme: path("request.tls"),
                referer: path("request.headers.Referer"),
                method: path("request.method"),
                status: path("status"),
                bytes: path("size"),
                time: path("ts"),
                client: path("request.client_ip|request.remote_ip|request.remote_addr"),
                ..JsonPaths::default()
            },
            // Traefik sets `RequestAddr` to the Host header and splits it into
            // `RequestHost` and `RequestPort`; v1 also writes `RequestLine`.
            JsonPreset::Traefik => JsonPaths {
                target: path("RequestPath"),
                request_line: path("RequestLine"),
                host: path("RequestAddr|RequestHost"),
                scheme: path("RequestScheme"),
                referer: path("request_Referer"),
                method: path("RequestMethod"),
                status: path("DownstreamStatus"),
                bytes: path("DownstreamContentSize"),
                time: path("StartUTC|time"),
                client: path("ClientHost"),
                ..JsonPaths::default()
            },
            // `requestUrl` is absolute: it holds scheme and host.
            JsonPreset::Gcp => JsonPaths {
                target: path("httpRequest.requestUrl"),
                referer: path("httpRequest.referer"),
                method: path("httpRequest.requestMethod"),
                status: path("httpRequest.status"),
                bytes: path("httpRequest.responseSize"),
                time: path("timestamp"),
                client: path("httpRequest.remoteIp"),
                ..JsonPaths::default()
            },
            // `ClientRequestPath` is the path alone; `ClientRequestURI` has the query.
            JsonPreset::Cloudflare => JsonPaths {
                target: path("ClientRequestURI"),
                host: path("ClientRequestHost"),
                scheme: path("ClientRequestScheme"),
                referer: path("ClientRequestReferer"),
                method: path("ClientRequestMethod"),
                status: path("EdgeResponseStatus"),
                bytes: path("EdgeResponseBytes"),
                time: path("EdgeStartTimestamp"),
                client: path("ClientIP"),
                ..JsonPaths::default()
            },
            JsonPreset::AzureAppGw => JsonPaths {
                target: path("properties.originalRequestUriWithArgs|properties.requestUri"),
                host: path("properties.originalHost|properties.host"),
                scheme: path("properties.sslEnabled"),
                method: path("properties.httpMethod"),
                status: path("properties.httpStatus"),
                bytes: path("properties.sentBytes"),
                time: path("timeStamp|time"),
                client: path("properties.clientIP"),
                ..JsonPaths::default()
            },
            JsonPreset::AzureFrontDoor => JsonPaths {
                target: path("properties.requestUri"),
                host: path("properties.hostName"),
                scheme: path("properties.requestProtocol"),
                referer: path("properties.referer"),
                method: path("properties.httpMethod"),
                status: path("properties.httpStatusCode"),
                bytes: path("properties.responseBytes"),
                time: path("time"),
                client: path("properties.clientIp"),
                ..JsonPaths::default()
            },
            JsonPreset::AwsWaf => JsonPaths {
                target: path("httpRequest.uri"),
                query: path("httpRequest.args"),
                host: path("httpRequest.headers[name=host].value"),
                referer: path("httpRequest.headers[name=referer].value"),
                method: path("httpRequest.httpMethod"),
                default_scheme: Some(Scheme::Https),
                status: path("responseCodeSent"),
                time: path("timestamp"),
                client: path("httpRequest.clientIp"),
                ..JsonPaths::default()
            },
            JsonPreset::Akamai => JsonPaths {
                target: path("reqPath"),
                query: path("queryStr"),
                host: path("reqHost"),
                scheme: path("proto|reqPort"),
                referer: path("referer"),
                method: path("reqMethod"),
                status: path("statusCode"),
                bytes: path("bytes"),
                time: path("reqTimeSec"),
                client: path("cliIP"),
                ..JsonPaths::default()
            },
            JsonPreset::Zeek => JsonPaths {
                target: path("uri"),
                host: path("host"),
                scheme: path(r"id\.resp_p"),
                referer: path("referrer"),
                method: path("method"),
                status: path("status_code"),
                bytes: path("response_body_len"),
                time: path("ts"),
                client: path(r"id\.orig_h"),
                ..JsonPaths::default()
            },
        }
    }
}

impl fmt::Display for JsonPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for JsonPreset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        JsonPreset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = JsonPreset::ALL.iter().map(|p| p.name()).collect();
                format!("unknown JSON preset {s:?} ({})", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::json::tests::{run, Other, other_fields, some};
    use crate::log::json::JsonExtractor;
    use crate::log::{Field, Line};

    #[test]
    fn preset_names_round_trip() {
        for preset in JsonPreset::ALL {
            assert_eq!(preset.name().parse::<JsonPreset>(), Ok(preset));
            assert_eq!(preset.to_string(), preset.name());
        }
        assert_eq!("Caddy".parse::<JsonPreset>(), Ok(JsonPreset::Caddy));
        assert!("apache".parse::<JsonPreset>().is_err());
    }

    /// (preset, a line of its documented layout, target, host, scheme,
    /// port, referer).
    type PresetCase = (
        JsonPreset,
        &'static [u8],
        &'static [u8],
        &'static [u8],
        Option<Scheme>,
        Option<u16>,
        &'static [u8],
    );

    /// One line per preset. The cloud layouts have no sample log here: these
    /// lines follow the services' documented schemas (Cloud Logging
    /// `HttpRequest`, Azure Monitor's `FrontDoorAccessLog` and
    /// `ApplicationGatewayAccessLog` v1/v2, Akamai DataStream 2 JSON keys).
    const PRESET_CASES: &[PresetCase] = &[
        (
            JsonPreset::Gcp,
            br#"{"insertId":"1","httpRequest":{"requestMethod":"GET","requestUrl":"https://www.example.com/a?b=1","status":200,"referer":"https://r.example/","latency":"0.1s"},"resource":{"type":"http_load_balancer"},"severity":"INFO"}"#,
            b"https://www.example.com/a?b=1",
            b"",
            None,
            None,
            b"https://r.example/",
        ),
        (
            JsonPreset::Cloudflare,
            br#"{"ClientIP":"192.0.2.1","ClientRequestHost":"www.example.com","ClientRequestMethod":"GET","ClientRequestURI":"/a?b=1","ClientRequestPath":"/a","ClientRequestReferer":"","ClientRequestScheme":"https","EdgeResponseStatus":200}"#,
            b"/a?b=1",
            b"www.example.com",
            Some(Scheme::Https),
            None,
            b"",
        ),
        (
            JsonPreset::AzureAppGw,
            br#"{"resourceId":"/SUBSCRIPTIONS/X","operationName":"ApplicationGatewayAccess","category":"ApplicationGatewayAccessLog","properties":{"instanceId":"appgw_1","clientIP":"192.0.2.1","httpMethod":"GET","requestUri":"/a","userAgent":"curl","httpStatus":200,"httpVersion":"HTTP/1.1","sslEnabled":"on","host":"backend.internal","originalRequestUriWithArgs":"/a?b=1","originalHost":"www.example.com"}}"#,
            b"/a?b=1",
            b"www.example.com",
            Some(Scheme::Https),
            None,
            b"",
        ),
        // v1: the query holds the gateway's own parameters; host and TLS are `-`.
        (
            JsonPreset::AzureAppGw,
            br#"{"operationName":"ApplicationGatewayAccess","category":"ApplicationGatewayAccessLog","properties":{"instanceId":"ApplicationGatewayRole_IN_0","clientIP":"192.0.2.1","httpMethod":"GET","requestUri":"/scripts/main.js","requestQuery":"X-AzureApplicationGateway-CACHE-HIT=0&SERVER-STATUS=200","httpStatus":200,"sslEnabled":"-","host":"-"}}"#,
            b"/scripts/main.js",
            b"",
            None,
            None,
            b"",
        ),
        (
            JsonPreset::AzureFrontDoor,
            br#"{"time":"2024-01-01T00:00:00Z","resourceId":"/SUBSCRIPTIONS/X","category":"FrontDoorAccessLog","operationName":"Microsoft.Cdn/Profiles/AccessLog/Write","properties":{"trackingReference":"0x","httpMethod":"GET","httpVersion":"2.0.0","requestUri":"https://www.example.com:443/a?b=1","hostName":"www.example.com","requestBytes":"100","clientIp":"192.0.2.1","requestProtocol":"HTTPS","httpStatusCode":"200","referer":"https://r.example/","pop":"AMS"}}"#,
            b"https://www.example.com:443/a?b=1",
            b"www.example.com",
            Some(Scheme::Https),
            None,
            b"https://r.example/",
        ),
        (
            JsonPreset::AwsWaf,
            br#"{"timestamp":1,"action":"ALLOW","httpSourceName":"ALB","httpRequest":{"clientIp":"192.0.2.1","country":"NL","headers":[{"name":"Host","value":"www.example.com"},{"name":"referer","value":"https://r.example/"}],"uri":"/a","args":"b=1","httpVersion":"HTTP/1.1","httpMethod":"GET","requestId":"x"}}"#,
            b"/a?b=1",
            b"www.example.com",
            Some(Scheme::Https),
            None,
            b"https://r.example/",
        ),
        (
            JsonPreset::Akamai,
            br#"{"version":"1","cp":"123","reqId":"1","reqTimeSec":"1.5","bytes":"10","cliIP":"192.0.2.1","statusCode":"200","proto":"HTTPS","reqHost":"www.example.com","reqMethod":"GET","reqPath":"a/b%20c","reqPort":"443","queryStr":"x=1","referer":"https://r.example/","UA":"curl"}"#,
            b"/a/b%20c?x=1",
            b"www.example.com",
            Some(Scheme::Https),
            None,
            b"https://r.example/",
        ),
        (
            JsonPreset::Zeek,
            br#"{"ts":1700000000.5,"uid":"C1","id.orig_h":"192.0.2.1","id.orig_p":5000,"id.resp_h":"192.0.2.2","id.resp_p":8080,"trans_depth":1,"method":"GET","host":"www.example.com","uri":"/a?b=1","referrer":"http://r.example/","version":"1.1"}"#,
            b"/a?b=1",
            b"www.example.com",
            None,
            Some(8080),
            b"http://r.example/",
        ),
    ];

    #[test]
    fn presets_read_their_documented_layouts() {
        for &(preset, line, target, host, scheme, port, referer) in PRESET_CASES {
            let (result, out) = run(preset.paths(), line, Field::Both);
            assert_eq!(result, Line::Record, "{preset}");
            assert_eq!(out.target(line), target, "{preset}");
            assert_eq!(out.host, host, "{preset}");
            assert_eq!((out.scheme, out.port), (scheme, port), "{preset}");
            assert_eq!(out.referer, referer, "{preset}");
            assert_eq!(out.has_referer, !referer.is_empty(), "{preset}");
            // And detection picks the preset for it.
            assert_eq!(
                JsonExtractor::detect_preset([line]),
                Some(preset),
                "{preset}"
            );
        }
    }

    #[test]
    fn presets_read_the_other_fields() {
        // Lines written from each service's documented layout. Times, by
        // python3 calendar.timegm: 2019-10-01T12:00:00Z is 1569931200,
        // 2023-03-23T05:17:37Z (AWS WAF's 1679548657700 ms) 1679548657.
        let cases: &[(JsonPreset, &[u8], Other)] = &[
            (
                JsonPreset::Nginx,
                br#"{"time_iso8601":"2019-10-01T14:00:00+02:00","remote_addr":"192.0.2.1","request":"GET /a HTTP/1.1","request_uri":"/a","request_method":"GET","status":"404","body_bytes_sent":"512"}"#,
                some(404, Some(512), "GET", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::Caddy,
                br#"{"level":"info","ts":1569931200.25,"msg":"handled request","request":{"remote_addr":"192.0.2.1:5000","method":"POST","host":"h","uri":"/a"},"size":12,"status":201}"#,
                some(201, Some(12), "POST", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::Traefik,
                br#"{"ClientHost":"192.0.2.1","DownstreamContentSize":19,"DownstreamStatus":404,"RequestMethod":"GET","RequestPath":"/","StartUTC":"2019-10-01T12:00:00.735539596Z","time":"2019-10-01T12:00:05Z"}"#,
                some(404, Some(19), "GET", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::Gcp,
                br#"{"httpRequest":{"requestMethod":"GET","requestUrl":"https://e.example/a","status":200,"responseSize":"3768","remoteIp":"192.0.2.1:443"},"timestamp":"2019-10-01T12:00:00.123456Z"}"#,
                some(200, Some(3768), "GET", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::Cloudflare,
                br#"{"ClientIP":"2001:db8::1","ClientRequestHost":"e.example","ClientRequestMethod":"HEAD","ClientRequestURI":"/","EdgeResponseBytes":570,"EdgeResponseStatus":301,"EdgeStartTimestamp":1569931200100000000}"#,
                some(301, Some(570), "HEAD", 1_569_931_200, "2001:db8::1"),
            ),
            (
                JsonPreset::AzureAppGw,
                br#"{"timeStamp":"2019-10-01T12:00:00+00:00","category":"ApplicationGatewayAccessLog","properties":{"clientIP":"192.0.2.1","httpMethod":"GET","requestUri":"/a","httpStatus":200,"sentBytes":466,"sslEnabled":"on","originalHost":"e.example"}}"#,
                some(200, Some(466), "GET", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::AzureFrontDoor,
                br#"{"time":"2019-10-01T12:00:00.0000000Z","category":"FrontDoorAccessLog","properties":{"httpMethod":"GET","requestUri":"https://e.example:443/a","hostName":"e.example","responseBytes":"1024","clientIp":"192.0.2.1","requestProtocol":"HTTPS","httpStatusCode":"503"}}"#,
                some(503, Some(1024), "GET", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::AwsWaf,
                br#"{"timestamp":1679548657700,"action":"BLOCK","responseCodeSent":403,"httpRequest":{"clientIp":"13.248.48.3","headers":[{"name":"host","value":"e.example"}],"uri":"/a","args":"","httpMethod":"GET"}}"#,
                (Some(403), None, Some("GET".into()), Some(1_679_548_657), Some("13.248.48.3".into())),
            ),
            (
                JsonPreset::Akamai,
                br#"{"reqTimeSec":"1569931200.280","cliIP":"192.0.2.1","reqMethod":"GET","reqHost":"e.example","reqPath":"a","statusCode":"200","bytes":"376255","proto":"HTTPS"}"#,
                some(200, Some(376_255), "GET", 1_569_931_200, "192.0.2.1"),
            ),
            (
                JsonPreset::Zeek,
                br#"{"ts":1569931200.5,"id.orig_h":"192.0.2.1","id.resp_p":80,"method":"GET","host":"e.example","uri":"/a","response_body_len":4705,"status_code":200}"#,
                some(200, Some(4705), "GET", 1_569_931_200, "192.0.2.1"),
            ),
        ];
        for (preset, line, want) in cases {
            let (result, got) = other_fields(preset.paths(), line);
            assert_eq!(result, Line::Record, "{preset}");
            assert_eq!(&got, want, "{preset}");
        }
        // Every preset reads the status at least.
        for preset in JsonPreset::ALL {
            assert!(preset.paths().status.is_some(), "{preset}");
            assert!(cases.iter().any(|c| c.0 == preset), "{preset}");
        }
    }
}
