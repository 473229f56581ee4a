package wirelog_test

import (
	"log"
	"net/http"
	"os"
	"slices"

	"mcptrace/wirelog"
)

// Wrap a server's MCP handler (here a stand-in for the SDK's) and every HTTP
// transaction it serves is appended to mcp-server.ndjson as one line.
func ExampleHandler() {
	logFile, err := os.OpenFile("mcp-server.ndjson", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		log.Fatal(err)
	}
	var mcpHandler http.Handler = http.NotFoundHandler() // mcp.NewStreamableHTTPHandler(...) in a real server
	http.Handle("/mcp", wirelog.Handler(mcpHandler, logFile, &wirelog.Options{
		Server:      &wirelog.Implementation{Name: "inventory", Version: "1.4.0"},
		DropHeaders: append(slices.Clone(wirelog.DefaultDropHeaders), "X-Api-Key"),
	}))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}
