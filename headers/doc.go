// Package headers parses the response fields that rate limiters send, so
// that ratecheck can grade them against the standards and the conventions in
// use:
//
//   - Retry-After (RFC 9110 §10.2.3), with a strict HTTP-date parser
//     (RFC 9110 §5.6.7) that names the rule a value breaks: ParseRetryAfter.
//   - The X-RateLimit-* / X-Rate-Limit-* vendor convention (GitHub, Twitter,
//     Okta, Discord, ...), including what unit a Reset number is in:
//     ParseXRateLimit.
//   - The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) in
//     all their generations, -01 through -10: ParseIETF.
//   - RFC 9457 problem details bodies: ParseProblem.
//   - RFC 9651 Structured Field Values, on which the IETF fields are built:
//     ParseList, ParseDictionary, ParseItem and the matching serialisers.
//
// Every parser is pure (no I/O), never panics, and returns a value together
// with an error that says what was wrong and cites the rule. Values that parse
// but are dubious (a zero Retry-After, remaining above the limit, a policy
// that is never declared) are returned as Findings rather than errors, since
// the probe grades them instead of rejecting them.
package headers
