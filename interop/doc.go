// Package interop is mcptrace's interoperability suite: real Go MCP SDKs
// (github.com/modelcontextprotocol/go-sdk and github.com/mark3labs/mcp-go),
// client and server, talking on loopback through a recording,
// fault-injecting reverse proxy, with the server side recorded by package
// wirelog; ingest then runs over the captures and every label it writes is
// compared with what the harness did and what the SDK returned.
//
// Everything is in _test.go files, so the SDKs are test dependencies only:
// no binary of this module links them. Run it with
//
//	go test ./interop
//
// See README.md in this directory for the scenarios and how their labels are
// derived.
package interop
