package traffic

import (
	"strconv"
)

// callCtx carries what a call's arguments chose to its result.
type callCtx struct {
	path, query, email, text []byte
	ext                      string
	owner, repo, table       string
	num                      int
}

func (c *callCtx) reset() {
	c.path, c.query, c.email, c.text = c.path[:0], c.query[:0], c.email[:0], c.text[:0]
	c.ext, c.owner, c.repo, c.table, c.num = "", "", "", "", 0
}

func (c *callCtx) clone() *callCtx {
	d := *c
	d.path, d.query, d.email, d.text = clone(c.path), clone(c.query), clone(c.email), clone(c.text)
	return &d
}

// runeStart is the largest offset up to n (at most len(b)) that starts a
// character: a cut there keeps the text valid UTF-8.
func runeStart(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for n > 0 && b[n]&0xC0 == 0x80 {
		n--
	}
	return n
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// jo writes a JSON object member by member.
type jo struct {
	b     []byte
	esc   int
	first bool
}

func openObj(b []byte, esc int) jo { return jo{b: append(b, '{'), esc: esc, first: true} }

func (o *jo) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
}
func (o *jo) s(k string, v []byte) { o.key(k); o.b = appendStr(o.b, v, o.esc) }
func (o *jo) ss(k, v string)       { o.key(k); o.b = appendStr(o.b, v, o.esc) }
func (o *jo) i(k string, v int64)  { o.key(k); o.b = appendInt(o.b, v) }
func (o *jo) raw(k, v string)      { o.key(k); o.b = append(o.b, v...) }
func (o *jo) close() []byte        { return append(o.b, '}') }

type tool struct {
	name, desc, schema string
	readOnly           bool
	weight             int
	slow               bool // long-running: answers take seconds, often as a stream with progress
	args               func(g *gen, o *jo, c *callCtx)
	ok                 func(g *gen, dst []byte, c *callCtx) []byte // the result text
	fail               func(g *gen, dst []byte, c *callCtx) []byte // the isError text
	invalid            func(g *gen, dst []byte, c *callCtx) []byte // a -32602 message
	// resource, when set, makes the result a text block plus an embedded
	// resource holding the text (github get_file_contents).
	resource bool
}

type prompt struct{ name, desc, text string }

type serverProfile struct {
	key, name, version string
	lang               string // "ts", "go", "python": key order, session ids, error bodies
	esc                int    // how its JSON encoder escapes
	sse                float64
	eventIDs           bool
	url, internal      string // as the client and as the server see it
	command, args      string // Claude Desktop's launch line
	banner             []string
	tools              []*tool
	totalWeight        int
	resources          []string // URI templates, "" none
	prompts            []prompt
	toolsList          []byte // the tools/list result object, level 1
	initResult         []byte // the initialize result object, level 1
	protocol           string
}

type clientProfile struct {
	name, version, ua string
	lang              string
	esc               int
	progress          bool
	getStream         float64
	protocol          string
	cancels           bool // a person can interrupt a call
}

var clients = []*clientProfile{
	{name: "claude-code", version: "2.0.14", ua: "claude-code/2.0.14 (external, cli)", lang: "ts", esc: escPlain, progress: true, getStream: 0.6, protocol: "2025-06-18", cancels: true},
	{name: "Visual Studio Code", version: "1.105.1", ua: "node", lang: "ts", esc: escPlain, progress: true, getStream: 0.7, protocol: "2025-11-25", cancels: true},
	{name: "cursor-vscode", version: "1.0.0", ua: "node", lang: "ts", esc: escPlain, getStream: 0.5, protocol: "2025-06-18", cancels: true},
	{name: "openai-mcp", version: "1.0.0", ua: "python-httpx/0.28.1", lang: "python", esc: escASCII, getStream: 0.3, protocol: "2025-06-18"},
	{name: "goose", version: "1.9.3", ua: "goose/1.9.3", lang: "rust", esc: escPlain, progress: true, protocol: "2025-06-18", cancels: true},
	{name: "Cline", version: "3.32.0", ua: "node", lang: "ts", esc: escPlain, getStream: 0.5, protocol: "2025-06-18"},
	{name: "acme-agent", version: "3.1.0", ua: "Go-http-client/2.0", lang: "go", esc: escHTML, progress: true, getStream: 0.2, protocol: "2025-11-25"},
}

// browserClient is the web application of HAR captures.
var browserClient = &clientProfile{name: "acme-web-console", version: "0.9.3",
	ua:   "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Safari/537.36",
	lang: "ts", esc: escPlain, progress: true, protocol: "2025-11-25", cancels: true}

var servers []*serverProfile

func init() {
	servers = []*serverProfile{filesystemServer(), githubServer(), searchServer(), postgresServer(), crmServer()}
	for _, s := range servers {
		s.build()
	}
}

func (s *serverProfile) build() {
	s.totalWeight = 0
	b := []byte(`{"tools":[`)
	for i, t := range s.tools {
		s.totalWeight += t.weight
		if i > 0 {
			b = append(b, ',')
		}
		o := openObj(b, s.esc)
		o.ss("name", t.name)
		o.ss("description", t.desc)
		o.raw("inputSchema", t.schema)
		if t.readOnly {
			o.raw("annotations", `{"readOnlyHint":true,"openWorldHint":false}`)
		} else {
			o.raw("annotations", `{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false}`)
		}
		b = o.close()
	}
	s.toolsList = append(b, "]}"...)
	caps := `{"tools":{"listChanged":true}`
	if len(s.resources) > 0 {
		caps += `,"resources":{"subscribe":false,"listChanged":false}`
	}
	if len(s.prompts) > 0 {
		caps += `,"prompts":{"listChanged":false}`
	}
	caps += `,"logging":{}}`
	o := openObj(nil, s.esc)
	o.ss("protocolVersion", s.protocol)
	o.raw("capabilities", caps)
	o.raw("serverInfo", `{"name":"`+s.name+`","version":"`+s.version+`"}`)
	if s.lang != "python" {
		o.ss("instructions", "Tools of "+s.name+". Prefer narrow queries; results over 25,000 tokens are cut. Paths are relative to the configured roots.")
	}
	s.initResult = o.close()
}

func (s *serverProfile) pickTool(g *gen) *tool {
	x := g.intn(s.totalWeight)
	for _, t := range s.tools {
		if x < t.weight {
			return t
		}
		x -= t.weight
	}
	return s.tools[0]
}

const pathSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`

func zodInvalid(name, field string) func(g *gen, dst []byte, c *callCtx) []byte {
	return func(g *gen, dst []byte, c *callCtx) []byte {
		dst = append(dst, "Invalid arguments for tool "+name+": [\n  {\n    \"code\": \"invalid_type\",\n    \"expected\": \"string\",\n    \"received\": \"undefined\",\n    \"path\": [\n      \""+field+"\"\n    ],\n    \"message\": \"Required\"\n  }\n]"...)
		return dst
	}
}

func filesystemServer() *serverProfile {
	notFound := func(g *gen, dst []byte, c *callCtx) []byte {
		switch g.intn(4) {
		case 0:
			dst = append(dst, "Error: Access denied - path outside allowed directories: "...)
			dst = append(dst, c.path...)
			return append(dst, " not in /home/dana/projects, /Users/sam/work"...)
		case 1:
			dst = append(dst, "Error: EACCES: permission denied, open '"...)
			dst = append(dst, c.path...)
			return append(dst, '\'')
		}
		dst = append(dst, "Error: ENOENT: no such file or directory, open '"...)
		dst = append(dst, c.path...)
		return append(dst, '\'')
	}
	filePath := func(g *gen, o *jo, c *callCtx) {
		c.ext = pick(g, sourceExts)
		c.path = g.absPath(c.path, c.ext)
		o.s("path", c.path)
	}
	dirPath := func(g *gen, o *jo, c *callCtx) {
		c.path = append(c.path, pick(g, homeDirs)...)
		c.path = append(c.path, pick(g, repos)...)
		if g.chance(0.5) {
			c.path = append(c.path, '/')
			c.path = append(c.path, pick(g, dirs)...)
		}
		o.s("path", c.path)
	}
	return &serverProfile{key: "filesystem", name: "secure-filesystem-server", version: "0.6.2", lang: "ts", esc: escPlain,
		sse: 0.35, eventIDs: true, protocol: "2025-06-18",
		url: "https://mcp.acme-labs.example/fs/mcp", internal: "http://10.0.3.11:3000/mcp",
		command: "/usr/local/bin/npx", args: "'-y',\n      '@modelcontextprotocol/server-filesystem',\n      '/Users/dana/projects',",
		banner: []string{"Secure MCP Filesystem Server running on stdio", "Allowed directories: [ '/Users/dana/projects', '/Users/dana/Downloads' ]"},
		tools: []*tool{
			{name: "read_text_file", weight: 30, readOnly: true, schema: `{"type":"object","properties":{"path":{"type":"string"},"tail":{"type":"number","description":"If provided, returns only the last N lines of the file"},"head":{"type":"number","description":"If provided, returns only the first N lines of the file"}},"required":["path"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
				desc: "Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Only works within allowed directories.",
				args: filePath, fail: notFound, invalid: zodInvalid("read_text_file", "path"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte { return g.sourceFile(dst, c.ext, g.textLines()) }},
			{name: "list_directory", weight: 14, readOnly: true, schema: pathSchema,
				desc: "Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This tool is essential for understanding directory structure and finding specific files within a directory. Only works within allowed directories.",
				args: dirPath, fail: notFound, invalid: zodInvalid("list_directory", "path"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					for i, n := 0, g.between(3, 40); i < n; i++ {
						if g.chance(0.3) {
							dst = append(dst, "[DIR] "...)
							dst = append(dst, pick(g, dirs)...)
						} else {
							dst = append(dst, "[FILE] "...)
							if g.chance(0.1) {
								dst = append(dst, pick(g, intlWords)...)
								dst = append(dst, ".txt"...)
							} else {
								dst = g.snake(dst)
								dst = append(dst, pick(g, sourceExts)...)
							}
						}
						dst = append(dst, '\n')
					}
					return dst
				}},
			{name: "directory_tree", weight: 5, readOnly: true, slow: true, schema: pathSchema,
				desc: "Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Files have no children array, while directories always have a children array (which may be empty). The output is formatted with 2-space indentation for readability. Only works within allowed directories.",
				args: dirPath, fail: notFound, invalid: zodInvalid("directory_tree", "path"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte { return g.tree(dst, 0, g.between(4, 12)) }},
			{name: "search_files", weight: 10, readOnly: true, slow: true, schema: `{"type":"object","properties":{"path":{"type":"string"},"pattern":{"type":"string"},"excludePatterns":{"type":"array","items":{"type":"string"},"default":[]}},"required":["path","pattern"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
				desc: "Recursively search for files and directories matching a pattern. Searches through all subdirectories from the starting path. The search is case-insensitive and matches partial names. Returns full paths to all matching items. Great for finding files when you don't know their exact location. Only searches within allowed directories.",
				args: func(g *gen, o *jo, c *callCtx) {
					dirPath(g, o, c)
					c.query = append(c.query, pick(g, words)...)
					o.s("pattern", c.query)
					o.raw("excludePatterns", `["node_modules","**/.git/**","dist"]`)
				}, fail: notFound, invalid: zodInvalid("search_files", "pattern"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					n := g.between(0, 30)
					if n == 0 {
						return append(dst, "No matches found"...)
					}
					for i := 0; i < n; i++ {
						dst = append(dst, c.path...)
						dst = append(dst, '/')
						dst = g.relPath(dst, pick(g, sourceExts))
						dst = append(dst, '\n')
					}
					return dst
				}},
			{name: "write_file", weight: 6, schema: `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
				desc: "Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories.",
				args: func(g *gen, o *jo, c *callCtx) {
					filePath(g, o, c)
					c.text = g.sourceFile(c.text, c.ext, g.between(10, 90))
					o.s("content", c.text)
				}, fail: notFound, invalid: zodInvalid("write_file", "content"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "Successfully wrote to "...)
					return append(dst, c.path...)
				}},
			{name: "edit_file", weight: 8, schema: `{"type":"object","properties":{"path":{"type":"string"},"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string","description":"Text to search for - must match exactly"},"newText":{"type":"string","description":"Text to replace with"}},"required":["oldText","newText"],"additionalProperties":false}},"dryRun":{"type":"boolean","default":false,"description":"Preview changes using git-style diff format"}},"required":["path","edits"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
				desc: "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories.",
				args: func(g *gen, o *jo, c *callCtx) {
					filePath(g, o, c)
					c.text = g.sourceFile(c.text[:0], c.ext, g.between(2, 8))
					mid := len(c.text) / 2
					for mid < len(c.text) && c.text[mid] != '\n' {
						mid++
					}
					o.key("edits")
					o.b = append(o.b, `[{"oldText":`...)
					o.b = appendStr(o.b, c.text[:mid], o.esc)
					o.b = append(o.b, `,"newText":`...)
					o.b = appendStr(o.b, c.text[mid:], o.esc)
					o.b = append(o.b, "}]"...)
					o.raw("dryRun", "false")
				}, invalid: zodInvalid("edit_file", "edits"),
				fail: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "Error: Could not find exact match for edit:\n"...)
					return append(dst, c.text[:runeStart(c.text, 300)]...)
				},
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "```diff\nIndex: "...)
					dst = append(dst, c.path...)
					dst = append(dst, "\n===================================================================\n--- "...)
					dst = append(dst, c.path...)
					dst = append(dst, "\toriginal\n+++ "...)
					dst = append(dst, c.path...)
					dst = append(dst, "\tmodified\n@@ -"...)
					dst = strconv.AppendInt(dst, int64(g.between(1, 400)), 10)
					dst = append(dst, ",7 +"...)
					dst = strconv.AppendInt(dst, int64(g.between(1, 400)), 10)
					dst = append(dst, ",8 @@\n"...)
					for i, n := 0, g.between(6, 30); i < n; i++ {
						dst = append(dst, " -+"[g.intn(3)])
						dst = g.expand(dst, pick(g, goBlocks[0]))
						dst = append(dst, '\n')
					}
					return append(dst, "```\n\n"...)
				}},
			{name: "get_file_info", weight: 4, readOnly: true, schema: pathSchema,
				desc: "Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type. This tool is perfect for understanding file characteristics without reading the actual content. Only works within allowed directories.",
				args: filePath, fail: notFound, invalid: zodInvalid("get_file_info", "path"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "size: "...)
					dst = strconv.AppendInt(dst, int64(g.between(120, 90000)), 10)
					dst = append(dst, "\ncreated: Tue Oct 14 2025 09:12:44 GMT+0200 (Mitteleuropäische Sommerzeit)\nmodified: Mon Nov 03 2025 17:40:02 GMT+0100 (Mitteleuropäische Normalzeit)\naccessed: Tue Nov 04 2025 08:01:13 GMT+0100 (Mitteleuropäische Normalzeit)\nisDirectory: false\nisFile: true\npermissions: 644"...)
					return dst
				}},
		},
	}
}

// tree appends a directory_tree JSON text: pretty-printed, 2 spaces.
func (g *gen) tree(dst []byte, depth, n int) []byte {
	ind := "\n" + "                "[:2*depth+2]
	dst = append(dst, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, ind...)
		if depth < 3 && g.chance(0.3) {
			dst = append(dst, `{"name": "`...)
			dst = append(dst, pick(g, dirs)...)
			dst = append(dst, `", "type": "directory", "children": `...)
			dst = g.tree(dst, depth+1, g.between(0, 5))
			dst = append(dst, '}')
		} else {
			dst = append(dst, `{"name": "`...)
			dst = g.snake(dst)
			dst = append(dst, pick(g, sourceExts)...)
			dst = append(dst, `", "type": "file"}`...)
		}
	}
	if n > 0 {
		dst = append(dst, ind[:len(ind)-2]...)
	}
	return append(dst, ']')
}

func ownerRepo(g *gen, o *jo, c *callCtx) {
	c.owner, c.repo = pick(g, orgs), pick(g, repos)
	o.ss("owner", c.owner)
	o.ss("repo", c.repo)
}

// issue appends one GitHub issue as the API returns it (compact JSON).
func (g *gen) issue(dst []byte, c *callCtx, num int) []byte {
	o := openObj(dst, escHTML)
	o.i("id", int64(2000000000+g.intn(900000000)))
	o.i("number", int64(num))
	o.key("title")
	o.b = append(o.b, '"')
	o.b = appendEsc(o.b, g.phrase(nil, g.between(3, 9)), escHTML)
	o.b = append(o.b, '"')
	o.ss("state", pick(g, []string{"open", "open", "closed"}))
	o.key("user")
	o.b = append(o.b, `{"login":"`...)
	o.b = g.login(o.b)
	o.b = append(o.b, `","type":"User"}`...)
	o.key("labels")
	o.b = append(o.b, `[{"name":"`...)
	o.b = append(o.b, pick(g, labels)...)
	o.b = append(o.b, `","color":"d73a4a"}]`...)
	o.i("comments", int64(g.intn(40)))
	o.key("created_at")
	o.b = append(g.isoDate(append(o.b, '"')), '"')
	o.key("html_url")
	o.b = append(o.b, `"https://github.com/`...)
	o.b = append(o.b, c.owner...)
	o.b = append(o.b, '/')
	o.b = append(o.b, c.repo...)
	o.b = append(o.b, "/issues/"...)
	o.b = append(strconv.AppendInt(o.b, int64(num), 10), '"')
	o.key("body")
	var body []byte
	for i, n := 0, g.between(1, 4); i < n; i++ {
		body = g.expand(body, pick(g, []string{"### Steps to reproduce\r\n\r\n1. @s\r\n2. @s\r\n3. see `@p`\r\n\r\n",
			"Expected: @s.\r\nActual: `@w` returns \"@s\" — @s.\r\n\r\n", "cc @e — @s\r\n", "```\r\n2025-11-04T09:12:45.002Z ERROR [@w] @s: context deadline exceeded\r\n```\r\n"}))
	}
	o.s("body", body)
	return o.close()
}

func githubServer() *serverProfile {
	ghFail := func(what string) func(g *gen, dst []byte, c *callCtx) []byte {
		return func(g *gen, dst []byte, c *callCtx) []byte {
			switch g.intn(3) {
			case 0:
				dst = append(dst, "API rate limit exceeded for user ID "...)
				dst = strconv.AppendInt(dst, int64(g.between(100000, 9999999)), 10)
				dst = append(dst, ". If you reach out to GitHub Support for help, please include the request ID "...)
				dst = g.hex(dst, 4)
				dst = append(dst, ':')
				dst = g.hex(dst, 4)
				return append(dst, " and timestamp 2025-11-04 09:12:45 UTC."...)
			case 1:
				dst = append(dst, "failed to "+what+": GET https://api.github.com/repos/"...)
				dst = append(dst, c.owner...)
				dst = append(dst, '/')
				dst = append(dst, c.repo...)
				return append(dst, ": 404 Not Found []"...)
			}
			dst = append(dst, "failed to "+what+": 403 Resource not accessible by personal access token []"...)
			return dst
		}
	}
	goInvalid := func(field string) func(g *gen, dst []byte, c *callCtx) []byte {
		return func(g *gen, dst []byte, c *callCtx) []byte {
			return append(dst, `invalid params: validating "arguments": validating root: required: missing properties: ["`+field+`"]`...)
		}
	}
	ownerRepoSchema := func(extra string, req string) string {
		return `{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},"repo":{"type":"string","description":"Repository name"}` + extra + `},"required":["owner","repo"` + req + `]}`
	}
	return &serverProfile{key: "github", name: "github-mcp-server", version: "0.19.0", lang: "go", esc: escHTML,
		sse: 0.6, eventIDs: false, protocol: "2025-06-18",
		url: "https://mcp.acme-labs.example/github/mcp", internal: "http://10.0.3.12:8082/mcp",
		command: "/usr/local/bin/docker", args: "'run',\n      '-i',\n      '--rm',\n      '-e',\n      'GITHUB_PERSONAL_ACCESS_TOKEN',\n      'ghcr.io/github/github-mcp-server',",
		banner:    []string{"GitHub MCP Server running on stdio"},
		resources: []string{"repo://%s/%s/contents/README.md", "repo://%s/%s/refs/heads/main/contents/docs/ARCHITECTURE.md"},
		prompts: []prompt{{"issue_to_fix_workflow", "Create an issue for a problem and then generate a pull request to fix it",
			"You are a development workflow assistant. Create a GitHub issue describing the problem, then open a pull request that references it with \"Fixes #<n>\". Keep the branch name short: fix/<slug>."}},
		tools: []*tool{
			{name: "search_code", weight: 12, readOnly: true, slow: true, schema: `{"type":"object","properties":{"query":{"type":"string","description":"Search query using GitHub code search syntax"},"perPage":{"type":"number","minimum":1,"maximum":100},"page":{"type":"number","minimum":1}},"required":["query"]}`,
				desc: "Fast and precise code search across ALL GitHub repositories using GitHub's native search engine. Best for finding exact symbols, functions, classes, or specific code patterns.",
				args: func(g *gen, o *jo, c *callCtx) {
					c.owner, c.repo = pick(g, orgs), pick(g, repos)
					c.query = g.ident(c.query)
					c.query = append(c.query, " language:"...)
					c.query = append(c.query, pick(g, []string{"go", "python", "typescript"})...)
					c.query = append(c.query, " org:"...)
					c.query = append(c.query, c.owner...)
					o.s("query", c.query)
					o.i("perPage", 30)
				}, fail: ghFail("search code"), invalid: goInvalid("query"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					n := g.between(1, 25)
					dst = append(dst, `{"total_count":`...)
					dst = strconv.AppendInt(dst, int64(n+g.intn(200)), 10)
					dst = append(dst, `,"incomplete_results":false,"items":[`...)
					for i := 0; i < n; i++ {
						if i > 0 {
							dst = append(dst, ',')
						}
						p := g.relPath(nil, pick(g, sourceExts))
						dst = append(dst, `{"name":"`...)
						dst = append(dst, p[lastSlash(p)+1:]...)
						dst = append(dst, `","path":"`...)
						dst = append(dst, p...)
						dst = append(dst, `","sha":"`...)
						dst = g.hex(dst, 40)
						dst = append(dst, `","html_url":"https://github.com/`...)
						dst = append(dst, c.owner...)
						dst = append(dst, '/')
						dst = append(dst, pick(g, repos)...)
						dst = append(dst, "/blob/main/"...)
						dst = append(dst, p...)
						dst = append(dst, `","repository":{"full_name":"`...)
						dst = append(dst, c.owner...)
						dst = append(dst, '/')
						dst = append(dst, pick(g, repos)...)
						dst = append(dst, `","private":true}}`...)
					}
					return append(dst, "]}"...)
				}},
			{name: "get_file_contents", weight: 14, readOnly: true, resource: true, schema: ownerRepoSchema(`,"path":{"type":"string","description":"Path to file/directory (directories must end with a slash '/')"},"ref":{"type":"string","description":"Accepts optional git refs such as refs/tags/{tag}, refs/heads/{branch} or refs/pull/{pr_number}/head"}`, ""),
				desc: "Get the contents of a file or directory from a GitHub repository",
				args: func(g *gen, o *jo, c *callCtx) {
					ownerRepo(g, o, c)
					c.ext = pick(g, sourceExts)
					c.path = g.relPath(c.path, c.ext)
					o.s("path", c.path)
					o.ss("ref", "refs/heads/main")
				}, fail: ghFail("get file contents"), invalid: goInvalid("owner"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte { return g.sourceFile(dst, c.ext, g.textLines()) }},
			{name: "list_issues", weight: 10, readOnly: true, schema: ownerRepoSchema(`,"state":{"type":"string","enum":["open","closed","all"]},"labels":{"type":"array","items":{"type":"string"}},"perPage":{"type":"number"}`, ""),
				desc: "List issues in a GitHub repository. For pagination, use the 'endCursor' from the previous response's 'pageInfo' in the 'after' parameter.",
				args: func(g *gen, o *jo, c *callCtx) {
					ownerRepo(g, o, c)
					o.ss("state", "open")
					o.key("labels")
					o.b = append(appendStr(append(o.b, '['), pick(g, labels), o.esc), ']')
					o.i("perPage", int64(pick(g, []int{10, 20, 30, 50})))
				}, fail: ghFail("list issues"), invalid: goInvalid("repo"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, '[')
					for i, n := 0, g.between(1, 8); i < n; i++ {
						if i > 0 {
							dst = append(dst, ',')
						}
						dst = g.issue(dst, c, g.between(100, 4800))
					}
					return append(dst, ']')
				}},
			{name: "get_issue", weight: 8, readOnly: true, schema: ownerRepoSchema(`,"issue_number":{"type":"number","description":"The number of the issue"}`, `,"issue_number"`),
				desc: "Get details of a specific issue in a GitHub repository.",
				args: func(g *gen, o *jo, c *callCtx) {
					ownerRepo(g, o, c)
					c.num = g.between(100, 4800)
					o.i("issue_number", int64(c.num))
				}, fail: ghFail("get issue"), invalid: goInvalid("issue_number"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte { return g.issue(dst, c, c.num) }},
			{name: "create_issue", weight: 4, schema: ownerRepoSchema(`,"title":{"type":"string"},"body":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}},"assignees":{"type":"array","items":{"type":"string"}}`, `,"title"`),
				desc: "Create a new issue in a GitHub repository.",
				args: func(g *gen, o *jo, c *callCtx) {
					ownerRepo(g, o, c)
					c.query = g.phrase(c.query, g.between(4, 10))
					o.s("title", c.query)
					c.text = g.blocks(c.text, mdBlocks, g.between(6, 30))
					o.s("body", c.text)
					o.key("labels")
					o.b = append(appendStr(append(o.b, '['), pick(g, labels), o.esc), ']')
					o.key("assignees")
					o.b = append(appendStr(append(o.b, '['), g.login(nil), o.esc), ']')
				}, fail: ghFail("create issue"), invalid: goInvalid("title"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte { return g.issue(dst, c, g.between(4800, 5200)) }},
			{name: "add_issue_comment", weight: 4, schema: ownerRepoSchema(`,"issue_number":{"type":"number"},"body":{"type":"string"}`, `,"issue_number","body"`),
				desc: "Add a comment to a specific issue in a GitHub repository.",
				args: func(g *gen, o *jo, c *callCtx) {
					ownerRepo(g, o, c)
					c.num = g.between(100, 4800)
					o.i("issue_number", int64(c.num))
					c.text = g.blocks(c.text, mdBlocks, g.between(2, 12))
					o.s("body", c.text)
				}, fail: ghFail("add comment"), invalid: goInvalid("body"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					o := openObj(dst, escHTML)
					o.i("id", int64(3000000000+g.intn(900000000)))
					o.key("html_url")
					o.b = append(o.b, `"https://github.com/`...)
					o.b = append(o.b, c.owner...)
					o.b = append(o.b, '/')
					o.b = append(o.b, c.repo...)
					o.b = append(o.b, `/issues/`...)
					o.b = append(strconv.AppendInt(o.b, int64(c.num), 10), '"')
					o.s("body", c.text)
					return o.close()
				}},
			{name: "get_pull_request_diff", weight: 5, readOnly: true, slow: true, schema: ownerRepoSchema(`,"pullNumber":{"type":"number"}`, `,"pullNumber"`),
				desc: "Get the diff of a pull request.",
				args: func(g *gen, o *jo, c *callCtx) {
					ownerRepo(g, o, c)
					o.i("pullNumber", int64(g.between(10, 2000)))
				}, fail: ghFail("get pull request diff"), invalid: goInvalid("pullNumber"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					for f, nf := 0, g.between(1, 4); f < nf; f++ {
						p := g.relPath(nil, ".go")
						dst = append(dst, "diff --git a/"...)
						dst = append(dst, p...)
						dst = append(dst, " b/"...)
						dst = append(dst, p...)
						dst = append(dst, "\nindex "...)
						dst = g.hex(dst, 7)
						dst = append(dst, ".."...)
						dst = g.hex(dst, 7)
						dst = append(dst, " 100644\n--- a/"...)
						dst = append(dst, p...)
						dst = append(dst, "\n+++ b/"...)
						dst = append(dst, p...)
						dst = append(dst, "\n@@ -41,9 +41,14 @@ func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {\n"...)
						for i, n := 0, g.between(8, 40); i < n; i++ {
							dst = append(dst, " -+ "[g.intn(4)])
							dst = g.expand(dst, pick(g, pick(g, goBlocks)))
							dst = append(dst, '\n')
						}
					}
					return dst
				}},
		},
	}
}

func lastSlash(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return i
		}
	}
	return -1
}

func searchServer() *serverProfile {
	queryArgs := func(g *gen, o *jo, c *callCtx) {
		c.query = g.phrase(c.query, g.between(2, 6))
		o.s("query", c.query)
		o.i("count", int64(pick(g, []int{5, 10, 10, 20})))
	}
	braveFail := func(g *gen, dst []byte, c *callCtx) []byte {
		if g.chance(0.5) {
			return append(dst, "Brave API error: 429 Too Many Requests\n{\"type\":\"ErrorResponse\",\"error\":{\"id\":\"5d6c3f0e-9a0b-4c1e-8f7d-2b3a4c5d6e7f\",\"status\":429,\"code\":\"RATE_LIMITED\",\"detail\":\"Request rate limit exceeded for plan.\",\"meta\":{\"plan\":\"Free\",\"rate_limit\":1,\"rate_current\":1,\"quota_limit\":2000,\"quota_current\":1417}},\"time\":1762247565}"...)
		}
		return append(dst, "Error: fetch failed: getaddrinfo ENOTFOUND api.search.brave.com"...)
	}
	return &serverProfile{key: "brave-search", name: "brave-search", version: "0.6.2", lang: "ts", esc: escPlain,
		sse: 0.2, eventIDs: true, protocol: "2025-06-18",
		url: "https://search-mcp.northwind.example/mcp", internal: "http://10.0.4.20:8080/mcp",
		command: "/usr/local/bin/npx", args: "'-y',\n      '@modelcontextprotocol/server-brave-search',",
		banner: []string{"Brave Search MCP Server running on stdio"},
		tools: []*tool{
			{name: "brave_web_search", weight: 20, readOnly: true, schema: `{"type":"object","properties":{"query":{"type":"string","description":"Search query (max 400 chars, 50 words)"},"count":{"type":"number","description":"Number of results (1-20, default 10)","default":10},"offset":{"type":"number","description":"Pagination offset (max 9, default 0)","default":0}},"required":["query"]}`,
				desc: "Performs a web search using the Brave Search API, ideal for general queries, news, articles, and online content. Use this for broad information gathering, recent events, or when you need diverse web sources. Supports pagination, content filtering, and freshness controls. Maximum 20 results per request, with offset for pagination.",
				args: queryArgs, fail: braveFail, invalid: zodInvalid("brave_web_search", "query"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					for i, n := 0, g.between(3, 12); i < n; i++ {
						if i > 0 {
							dst = append(dst, "\n\n"...)
						}
						dst = g.expand(dst, "Title: @T — @s\nDescription: @s. @s <strong>@w</strong> @s, @s.\nURL: https://")
						dst = append(dst, pick(g, []string{"docs.example.org", "blog.example.com", "de.wikipedia.test", "news.example.net", "stackoverflow.test/questions"})...)
						dst = g.expand(dst, "/@w/@w-@n")
					}
					return dst
				}},
			{name: "brave_local_search", weight: 5, readOnly: true, schema: `{"type":"object","properties":{"query":{"type":"string","description":"Local search query (e.g. 'pizza near Central Park')"},"count":{"type":"number","default":5}},"required":["query"]}`,
				desc: "Searches for local businesses and places using Brave's Local Search API. Best for queries related to physical locations, businesses, restaurants, services, etc. Returns detailed information including business names and addresses, ratings and review counts, phone numbers and opening hours.",
				args: queryArgs, fail: braveFail, invalid: zodInvalid("brave_local_search", "query"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					for i, n := 0, g.between(2, 6); i < n; i++ {
						dst = g.expand(dst, "Name: Café @T\nAddress: ")
						dst = append(dst, pick(g, []string{"Bahnhofstraße 12, 8001 Zürich", "ul. Floriańska 3, 31-019 Kraków", "Rua Augusta 1508, São Paulo", "Østergade 1, 1100 København", "12 Rue de Besançon, 75015 Paris"})...)
						dst = g.expand(dst, "\nPhone: +41 44 @n 12 34\nRating: 4.@n (@n reviews)\nPrice Range: €€\nHours: Mo–Fr 07:00–19:00, Sa 08:00–16:00\nDescription: @s\n---\n")
					}
					return dst
				}},
			{name: "fetch_url", weight: 10, readOnly: true, slow: true, schema: `{"type":"object","properties":{"url":{"type":"string","format":"uri"},"max_length":{"type":"integer","default":5000},"raw":{"type":"boolean","default":false}},"required":["url"]}`,
				desc: "Fetches a URL from the internet and optionally extracts its contents as markdown.",
				args: func(g *gen, o *jo, c *callCtx) {
					c.query = g.expand(c.query, "https://docs.example.org/@w/@w?lang=de&ref=@w")
					o.s("url", c.query)
					o.i("max_length", 20000)
				}, fail: braveFail, invalid: zodInvalid("fetch_url", "url"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "Contents of "...)
					dst = append(dst, c.query...)
					dst = append(dst, ":\n"...)
					return g.blocks(dst, mdBlocks, g.textLines())
				}},
		},
	}
}

func postgresServer() *serverProfile {
	pgFail := func(g *gen, dst []byte, c *callCtx) []byte {
		dst = append(dst, "Error executing tool "...)
		switch g.intn(3) {
		case 0:
			dst = append(dst, "query: relation \"orders_2023\" does not exist\nLINE 1: SELECT * FROM orders_2023 WHERE status = 'open'\n                      ^"...)
		case 1:
			dst = append(dst, "query: canceling statement due to statement timeout"...)
		default:
			dst = append(dst, "query: permission denied for table audit_log"...)
		}
		return dst
	}
	pyInvalid := func(field string) func(g *gen, dst []byte, c *callCtx) []byte {
		return func(g *gen, dst []byte, c *callCtx) []byte {
			return append(dst, "1 validation error for call[query]\n"+field+"\n  Field required [type=missing, input_value={'statement': 'SELECT 1'}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.11/v/missing"...)
		}
	}
	sqlArgs := func(g *gen, o *jo, c *callCtx) {
		c.text = g.blocks(c.text, sqlBlocks, g.between(1, 9))
		o.s("sql", c.text)
	}
	rows := func(g *gen, dst []byte, c *callCtx) []byte {
		dst = append(dst, '[')
		for i, n := 0, g.between(1, 40); i < n; i++ {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = g.expand(dst, "{'id': @n, 'customer': '")
			dst = g.person(dst)
			dst = g.expand(dst, "', 'email': '@e', 'status': '@w', 'amount_cents': @n, 'currency': 'EUR', 'created_at': datetime.datetime(2025, 11, 3, 17, 40, 2, tzinfo=datetime.timezone.utc), 'note': '@s'}")
		}
		return append(dst, ']')
	}
	return &serverProfile{key: "postgres", name: "postgres-mcp", version: "0.3.0", lang: "python", esc: escASCII,
		sse: 0.7, eventIDs: false, protocol: "2025-06-18",
		url: "https://db-mcp.globex.example/mcp/", internal: "http://127.0.0.1:8000/mcp/",
		command: "/Users/dana/.local/bin/uv", args: "'run',\n      'postgres-mcp',\n      '--access-mode=restricted',",
		banner:    []string{"INFO:     Started server process [48211]", "INFO:     Waiting for application startup.", "INFO:     Application startup complete."},
		resources: []string{"postgres://db/public/%s/schema"},
		prompts: []prompt{{"explain_slow_query", "Explain why a query is slow and propose indexes",
			"Run EXPLAIN (ANALYZE, BUFFERS) on the query below, read the plan, and propose at most two indexes. Say which rows estimate is off and why."}},
		tools: []*tool{
			{name: "execute_sql", weight: 20, slow: true, schema: `{"properties":{"sql":{"default":"all","description":"SQL to run","title":"Sql","type":"string"}},"type":"object"}`,
				desc: "Execute any SQL query", args: sqlArgs, fail: pgFail, invalid: pyInvalid("sql"), ok: rows},
			{name: "list_objects", weight: 6, readOnly: true, schema: `{"properties":{"schema_name":{"description":"Schema name","title":"Schema Name","type":"string"},"object_type":{"default":"table","description":"Object type: 'table', 'view', 'sequence', or 'extension'","title":"Object Type","type":"string"}},"required":["schema_name"],"type":"object"}`,
				desc: "List objects in a schema",
				args: func(g *gen, o *jo, c *callCtx) { o.ss("schema_name", "public"); o.ss("object_type", "table") },
				fail: pgFail, invalid: pyInvalid("schema_name"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, '[')
					for i, t := range sqlTables {
						if i > 0 {
							dst = append(dst, ", "...)
						}
						dst = append(dst, "{'schema': 'public', 'name': '"...)
						dst = append(dst, t...)
						dst = append(dst, "', 'type': 'BASE TABLE'}"...)
					}
					return append(dst, ']')
				}},
			{name: "get_object_details", weight: 6, readOnly: true, schema: `{"properties":{"schema_name":{"title":"Schema Name","type":"string"},"object_name":{"title":"Object Name","type":"string"},"object_type":{"default":"table","title":"Object Type","type":"string"}},"required":["schema_name","object_name"],"type":"object"}`,
				desc: "Show detailed information about a database object",
				args: func(g *gen, o *jo, c *callCtx) {
					c.table = pick(g, sqlTables)
					o.ss("schema_name", "public")
					o.ss("object_name", c.table)
				}, fail: pgFail, invalid: pyInvalid("object_name"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "{'basic': {'schema': 'public', 'name': '"...)
					dst = append(dst, c.table...)
					dst = append(dst, "', 'type': 'table'}, 'columns': ["...)
					for i, col := range sqlColumns[:g.between(4, len(sqlColumns))] {
						if i > 0 {
							dst = append(dst, ", "...)
						}
						dst = append(dst, "{'column': '"...)
						dst = append(dst, col...)
						dst = append(dst, "', 'data_type': '"...)
						dst = append(dst, pick(g, []string{"bigint", "text", "timestamp with time zone", "integer", "jsonb", "character varying(255)"})...)
						dst = append(dst, "', 'is_nullable': '"...)
						dst = append(dst, pick(g, []string{"YES", "NO"})...)
						dst = append(dst, "', 'default': None}"...)
					}
					return append(dst, "], 'constraints': [{'name': 'pk_id', 'type': 'PRIMARY KEY', 'columns': ['id']}], 'indexes': []}"...)
				}},
			{name: "explain_query", weight: 5, readOnly: true, slow: true, schema: `{"properties":{"sql":{"title":"Sql","type":"string"},"analyze":{"default":false,"title":"Analyze","type":"boolean"}},"required":["sql"],"type":"object"}`,
				desc: "Explains the execution plan for a SQL query, showing how the database will execute it and provides detailed cost estimates.",
				args: sqlArgs, fail: pgFail, invalid: pyInvalid("sql"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = g.expand(dst, "Limit  (cost=1204.33..1204.58 rows=@n width=52) (actual time=18.402..18.431 rows=@n loops=1)\n  ->  Sort  (cost=1204.33..1229.33 rows=10000 width=52)\n        Sort Key: (sum(o.amount_cents)) DESC\n        Sort Method: top-N heapsort  Memory: 27kB\n        ->  HashAggregate  (cost=881.00..981.00 rows=10000 width=52)\n              Group Key: o.@c, c.@c\n              ->  Hash Join  (cost=280.00..731.00 rows=20000 width=28)\n                    Hash Cond: (o.customer_id = c.id)\n                    ->  Seq Scan on @t o  (cost=0.00..401.00 rows=20000 width=16)\n                          Filter: (created_at >= (now() - '30 days'::interval))\nPlanning Time: 0.412 ms\nExecution Time: 18.577 ms")
					return dst
				}},
		},
	}
}

func crmServer() *serverProfile {
	crmFail := func(g *gen, dst []byte, c *callCtx) []byte {
		if len(c.email) > 0 && g.chance(0.6) {
			dst = append(dst, "Customer not found: "...)
			return append(dst, c.email...)
		}
		return append(dst, "SMTP relay rejected the message: 550 5.7.1 Message rejected due to content restrictions (policy: outbound-dlp-v2)"...)
	}
	return &serverProfile{key: "crm", name: "acme-crm", version: "2.4.1", lang: "ts", esc: escPlain,
		sse: 0.3, eventIDs: true, protocol: "2025-11-25",
		url: "https://crm.acme-labs.example/api/mcp", internal: "http://10.0.5.3:7000/api/mcp",
		command: "/usr/local/bin/node", args: "'/Users/dana/tools/acme-crm-mcp/dist/index.js',",
		banner: []string{"acme-crm MCP server v2.4.1 listening on stdio"},
		tools: []*tool{
			{name: "lookup_customer", weight: 12, readOnly: true, schema: `{"type":"object","properties":{"email":{"type":"string","format":"email"}},"required":["email"],"additionalProperties":false}`,
				desc: "Find a customer by e-mail address and return their account, plan and open tickets.",
				args: func(g *gen, o *jo, c *callCtx) { c.email = g.email(c.email); o.s("email", c.email) },
				fail: crmFail, invalid: zodInvalid("lookup_customer", "email"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = g.expand(dst, "{\n  \"id\": \"cus_@n@n\",\n  \"name\": \"")
					dst = g.person(dst)
					dst = append(dst, "\",\n  \"email\": \""...)
					dst = append(dst, c.email...)
					dst = g.expand(dst, "\",\n  \"plan\": \"business\",\n  \"mrr_eur\": @n,\n  \"city\": \"")
					dst = append(dst, pick(g, intlWords)...)
					dst = g.expand(dst, "\",\n  \"notes\": \"@s; prefers contact via @e\",\n  \"open_tickets\": [@n, @n]\n}")
					return dst
				}},
			{name: "list_tickets", weight: 8, readOnly: true, schema: `{"type":"object","properties":{"assignee_email":{"type":"string"},"status":{"type":"string","enum":["open","pending","closed"]},"limit":{"type":"integer","maximum":100}},"additionalProperties":false}`,
				desc: "List support tickets, optionally filtered by assignee and status.",
				args: func(g *gen, o *jo, c *callCtx) {
					c.email = g.email(c.email)
					o.s("assignee_email", c.email)
					o.ss("status", "open")
					o.i("limit", 25)
				}, fail: crmFail, invalid: zodInvalid("list_tickets", "status"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					for i, n := 0, g.between(0, 25); i < n; i++ {
						dst = g.expand(dst, "#@n [open] @s — reported by @P <@e>, assigned to ")
						dst = append(dst, c.email...)
						dst = append(dst, '\n')
					}
					return dst
				}},
			{name: "send_email", weight: 4, schema: `{"type":"object","properties":{"to":{"type":"array","items":{"type":"string","format":"email"}},"cc":{"type":"array","items":{"type":"string","format":"email"}},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject","body"],"additionalProperties":false}`,
				desc: "Send an e-mail to one or more customers from the support mailbox.",
				args: func(g *gen, o *jo, c *callCtx) {
					c.email = g.email(c.email)
					o.key("to")
					o.b = append(appendStr(append(o.b, '['), c.email, o.esc), ']')
					o.key("cc")
					o.b = append(appendStr(append(o.b, '['), g.email(nil), o.esc), ']')
					c.query = g.phrase(c.query, g.between(3, 8))
					o.s("subject", c.query)
					c.text = append(c.text, "Hallo "...)
					c.text = g.person(c.text)
					c.text = append(c.text, ",\n\n"...)
					c.text = g.blocks(c.text, mdBlocks, g.between(3, 14))
					c.text = append(c.text, "\nViele Grüße / Best regards,\nAcme Support — support@acme-labs.io\n"...)
					o.s("body", c.text)
				}, fail: crmFail, invalid: zodInvalid("send_email", "to"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "Email queued for delivery to "...)
					dst = append(dst, c.email...)
					dst = append(dst, " (message id msg_"...)
					return append(g.hex(dst, 24), ')')
				}},
			{name: "update_ticket", weight: 4, schema: `{"type":"object","properties":{"ticket_id":{"type":"integer"},"status":{"type":"string","enum":["open","pending","closed"]},"comment":{"type":"string"}},"required":["ticket_id"],"additionalProperties":false}`,
				desc: "Change a ticket's status and add an internal comment.",
				args: func(g *gen, o *jo, c *callCtx) {
					c.num = g.between(1000, 9999)
					o.i("ticket_id", int64(c.num))
					o.ss("status", pick(g, []string{"pending", "closed"}))
					c.text = g.phrase(c.text, g.between(5, 30))
					o.s("comment", c.text)
				}, fail: crmFail, invalid: zodInvalid("update_ticket", "ticket_id"),
				ok: func(g *gen, dst []byte, c *callCtx) []byte {
					dst = append(dst, "Ticket #"...)
					dst = strconv.AppendInt(dst, int64(c.num), 10)
					return append(dst, " updated."...)
				}},
		},
	}
}
