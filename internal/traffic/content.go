package traffic

import (
	"math/rand/v2"
	"strconv"
)

// gen draws everything random in a log: one PCG stream, so a seed gives one log.
type gen struct {
	r *rand.Rand
}

func newGen(seed int64) *gen {
	return &gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x6d63707472616365))}
}

func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func (g *gen) between(a, b int) int  { return a + g.r.IntN(b-a+1) }
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func pick[T any](g *gen, xs []T) T   { return xs[g.r.IntN(len(xs))] }

// expo draws an exponential duration with the given mean (µs), capped at 20 means.
func (g *gen) expo(mean int64) int64 {
	d := int64(g.r.ExpFloat64() * float64(mean))
	if d > 20*mean {
		d = 20 * mean
	}
	return d
}

// span draws a duration in [lo, hi] µs, skewed towards lo (most calls are quick).
func (g *gen) span(lo, hi int64) int64 {
	f := g.r.Float64()
	return lo + int64(f*f*float64(hi-lo))
}

var (
	words = []string{"account", "invoice", "retry", "policy", "ledger", "report", "export", "client", "server",
		"session", "token", "cache", "queue", "worker", "order", "customer", "payment", "refund", "batch", "schema",
		"index", "shard", "config", "handler", "metrics", "event", "stream", "record", "buffer", "reader", "writer",
		"parser", "request", "response", "user", "tenant", "billing", "quota", "limit", "window", "backoff",
		"deadline", "timeout", "status", "result", "audit", "sync", "job", "task", "pipeline", "upload",
		"document", "search", "query", "filter", "page", "cursor", "snapshot", "region", "balance", "ticket",
		"shipment", "catalog", "price", "discount", "webhook", "signature", "checksum", "manifest", "partition"}
	intlWords = []string{"café", "naïve", "résumé", "façade", "Zürich", "München", "São Paulo", "Kraków", "Ærøskøbing",
		"smørrebrød", "Größe", "Straße", "niño", "año", "déjà vu", "coördinate", "jalapeño", "Ελληνικά", "Привет",
		"東京", "日本語のメモ", "한국어", "中文文档", "über", "fiancée", "piñata", "Łódź", "Þórshöfn", "İstanbul", "Malmö",
		"Genève", "Besançon", "Curaçao", "Reykjavík", "Dvůr Králové", "Škoda", "Sønderborg", "crème brûlée"}
	emoji      = []string{"✅", "⚠️", "🚀", "📦", "🔥", "✨", "❌", "→", "—", "…", "“quoted”", "‘single’", "½", "€", "£", "±", "°C"}
	firstNames = []string{"Dana", "Sam", "José", "Zoë", "Łukasz", "Søren", "Ngọc", "François", "Inés", "Aiko",
		"Mateo", "Priya", "Oğuz", "Björn", "Chloé", "Kwame", "Anaïs", "Jürgen", "Lucía", "Mikael", "Ravi", "Hana"}
	lastNames = []string{"Kowalski", "Müller", "Nguyễn", "García", "Okafor", "Dvořák", "Çelik", "Ødegaard", "Schäfer",
		"Tanaka", "Novák", "O'Brien", "Rossi", "Haddad", "Lindqvist", "Papadopoulos", "Fernández", "Wójcik", "Singh"}
	asciiFirst = []string{"dana", "sam", "jose", "zoe", "lukasz", "soren", "ngoc", "francois", "ines", "aiko", "mateo",
		"priya", "oguz", "bjorn", "chloe", "kwame", "anais", "jurgen", "lucia", "mikael", "ravi", "hana"}
	asciiLast = []string{"kowalski", "mueller", "nguyen", "garcia", "okafor", "dvorak", "celik", "odegaard", "schaefer",
		"tanaka", "novak", "obrien", "rossi", "haddad", "lindqvist", "papadopoulos", "fernandez", "wojcik", "singh"}
	mailDomains = []string{"acme-labs.io", "northwind.example", "globex.test", "initech.example", "contoso.test",
		"fabrikam.example", "gmail.test", "outlook.test"}
	orgs  = []string{"acme-labs", "northwind", "globex-corp", "initech", "vandelay-ind", "contoso", "fabrikam", "tailspin"}
	repos = []string{"billing-api", "ledger", "web-console", "infra", "data-pipeline", "mobile-app", "docs", "auth-service",
		"search-indexer", "payments-gateway", "design-system", "ml-models", "notifications", "inventory"}
	dirs = []string{"internal", "pkg", "cmd", "src", "lib", "api", "handlers", "services", "models", "utils",
		"components", "tests", "migrations", "scripts", "config", "docs", "retry", "storage", "http", "db", "jobs"}
	labels     = []string{"bug", "enhancement", "good first issue", "needs-triage", "p1", "p2", "regression", "security", "docs", "performance", "flaky-test"}
	sqlTables  = []string{"orders", "customers", "invoices", "payments", "refunds", "shipments", "line_items", "accounts", "audit_log", "subscriptions", "products", "events_2025"}
	sqlColumns = []string{"id", "customer_id", "created_at", "updated_at", "status", "amount_cents", "currency", "email",
		"country", "region", "total", "note", "external_ref", "deleted_at", "plan", "seats", "quantity", "sku"}
	hosts = []string{"db-primary.internal", "redis-7.cache.internal", "api.stripe.test", "s3.eu-west-1.amazonaws.test",
		"10.0.3.7", "search-indexer.svc.cluster.local", "kafka-2.broker.internal"}
)

// ident returns a lowerCamel identifier.
func (g *gen) ident(dst []byte) []byte {
	w := pick(g, words)
	dst = append(dst, w...)
	if g.chance(0.6) {
		w2 := pick(g, words)
		dst = append(dst, w2[0]-'a'+'A')
		dst = append(dst, w2[1:]...)
	}
	return dst
}

// typeName returns an UpperCamel identifier.
func (g *gen) typeName(dst []byte) []byte {
	n := len(dst)
	dst = g.ident(dst)
	dst[n] = dst[n] - 'a' + 'A'
	return dst
}

func (g *gen) snake(dst []byte) []byte {
	dst = append(dst, pick(g, words)...)
	if g.chance(0.5) {
		dst = append(dst, '_')
		dst = append(dst, pick(g, words)...)
	}
	return dst
}

// phrase returns a few words, sometimes with a non-ASCII word or sign.
func (g *gen) phrase(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ' ')
		}
		switch x := g.intn(14); {
		case x == 0:
			dst = append(dst, pick(g, intlWords)...)
		case x == 1 && i > 0:
			dst = append(dst, pick(g, emoji)...)
		default:
			dst = append(dst, pick(g, words)...)
		}
	}
	return dst
}

func (g *gen) person(dst []byte) []byte {
	dst = append(dst, pick(g, firstNames)...)
	dst = append(dst, ' ')
	return append(dst, pick(g, lastNames)...)
}

func (g *gen) email(dst []byte) []byte {
	dst = append(dst, pick(g, asciiFirst)...)
	dst = append(dst, '.')
	dst = append(dst, pick(g, asciiLast)...)
	if g.chance(0.2) {
		dst = strconv.AppendInt(dst, int64(g.intn(99)), 10)
	}
	dst = append(dst, '@')
	return append(dst, pick(g, mailDomains)...)
}

func (g *gen) login(dst []byte) []byte {
	dst = append(dst, pick(g, asciiFirst)...)
	if g.chance(0.5) {
		dst = append(dst, '-')
		dst = append(dst, pick(g, asciiLast)...)
	} else {
		dst = strconv.AppendInt(dst, int64(g.intn(990)+10), 10)
	}
	return dst
}

var sourceExts = []string{".go", ".py", ".ts", ".tsx", ".sql", ".md", ".yaml", ".json"}

// relPath returns a repository-relative source path with the given extension.
func (g *gen) relPath(dst []byte, ext string) []byte {
	for i, n := 0, g.between(1, 3); i < n; i++ {
		dst = append(dst, pick(g, dirs)...)
		dst = append(dst, '/')
	}
	dst = g.snake(dst)
	if ext == ".go" && g.chance(0.25) {
		dst = append(dst, "_test"...)
	}
	return append(dst, ext...)
}

var homeDirs = []string{"/home/dana/projects/", "/Users/sam/work/", "/Users/zoë/Développement/", "/home/ci/builds/", "/srv/repos/"}

func (g *gen) absPath(dst []byte, ext string) []byte {
	if g.chance(0.06) {
		dst = append(dst, `C:\Users\jose\source\repos\`...)
		dst = append(dst, pick(g, repos)...)
		dst = append(dst, '\\')
		dst = append(dst, pick(g, dirs)...)
		dst = append(dst, '\\')
		dst = g.snake(dst)
		return append(dst, ext...)
	}
	dst = append(dst, pick(g, homeDirs)...)
	dst = append(dst, pick(g, repos)...)
	dst = append(dst, '/')
	return g.relPath(dst, ext)
}

func (g *gen) hex(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, hexDigits[g.intn(16)])
	}
	return dst
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func (g *gen) alnum(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, alnum[g.intn(len(alnum))])
	}
	return dst
}

func (g *gen) uuid(dst []byte) []byte {
	dst = g.hex(dst, 8)
	dst = append(dst, '-')
	dst = g.hex(dst, 4)
	dst = append(dst, "-4"...)
	dst = g.hex(dst, 3)
	dst = append(dst, '-', "89ab"[g.intn(4)])
	dst = g.hex(dst, 3)
	dst = append(dst, '-')
	return g.hex(dst, 12)
}

// date appends a date-time in 2025 as ISO 8601.
func (g *gen) isoDate(dst []byte) []byte {
	dst = append(dst, "2025-"...)
	m, d := g.between(1, 12), g.between(1, 28)
	dst = append(dst, byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10), 'T')
	h, mi, s := g.intn(24), g.intn(60), g.intn(60)
	return append(dst, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10), 'Z')
}

// expand appends a template: @i ident, @T type name, @f snake_case, @w a
// word, @s a short phrase, @n a number, @e an e-mail address, @p a path,
// @h a host, @t a table, @c a column, @@ an @.
func (g *gen) expand(dst []byte, t string) []byte {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '@' || i+1 == len(t) {
			dst = append(dst, c)
			continue
		}
		i++
		switch t[i] {
		case 'i':
			dst = g.ident(dst)
		case 'T':
			dst = g.typeName(dst)
		case 'f':
			dst = g.snake(dst)
		case 'w':
			dst = append(dst, pick(g, words)...)
		case 's':
			dst = g.phrase(dst, g.between(2, 6))
		case 'n':
			dst = strconv.AppendInt(dst, int64(g.intn(5000)), 10)
		case 'e':
			dst = g.email(dst)
		case 'p':
			dst = g.relPath(dst, pick(g, sourceExts))
		case 'h':
			dst = append(dst, pick(g, hosts)...)
		case 't':
			dst = append(dst, pick(g, sqlTables)...)
		case 'c':
			dst = append(dst, pick(g, sqlColumns)...)
		case 'P':
			dst = g.person(dst)
		default:
			dst = append(dst, '@', t[i])
		}
	}
	return dst
}

// Code, as blocks of line templates.
var (
	goBlocks = [][]string{
		{"// @T @s.", "func (s *@T) @T(ctx context.Context, @i string, limit int) ([]@T, error) {",
			"\tif @i == \"\" {", "\t\treturn nil, fmt.Errorf(\"@w: empty %q: %w\", @i, ErrInvalid)", "\t}",
			"\trows, err := s.db.QueryContext(ctx, `SELECT @c, @c FROM @t WHERE @c = $1 LIMIT $2`, @i, limit)",
			"\tif err != nil {", "\t\treturn nil, fmt.Errorf(\"query @t: %w\", err)", "\t}", "\tdefer rows.Close()",
			"\tvar out []@T", "\tfor rows.Next() {", "\t\tvar v @T", "\t\tif err := rows.Scan(&v.@T, &v.@T); err != nil {",
			"\t\t\treturn nil, err", "\t\t}", "\t\tout = append(out, v)", "\t}", "\treturn out, rows.Err()", "}", ""},
		{"type @T struct {", "\t@T string `json:\"@f\"`", "\t@T int64 `json:\"@f,omitempty\"`", "\t@T time.Time `json:\"@f\"`",
			"\tmu sync.Mutex", "}", ""},
		{"func Test@T(t *testing.T) {", "\tcases := []struct {", "\t\tname string", "\t\tin   string", "\t\twant int", "\t}{",
			"\t\t{\"@s\", \"@w\", @n},", "\t\t{\"@s\", \"\", 0},", "\t}", "\tfor _, tc := range cases {",
			"\t\tt.Run(tc.name, func(t *testing.T) {", "\t\t\tif got := @i(tc.in); got != tc.want {",
			"\t\t\t\tt.Errorf(\"@i(%q) = %d, want %d\", tc.in, got, tc.want)", "\t\t\t}", "\t\t})", "\t}", "}", ""},
		{"const (", "\tmax@T = @n // @s", "\tdefault@T = 30 * time.Second", ")", ""},
		{"\tbackoff := time.Duration(attempt*attempt) * 100 * time.Millisecond", "\tselect {", "\tcase <-ctx.Done():",
			"\t\treturn ctx.Err()", "\tcase <-time.After(backoff):", "\t}", "\tlog.Printf(\"retrying @w (attempt %d): %v\", attempt, err)", ""},
	}
	pyBlocks = [][]string{
		{"class @T:", "    \"\"\"@s.\"\"\"", "", "    def __init__(self, @f: str, limit: int = @n) -> None:",
			"        self.@f = @f", "        self._cache: dict[str, list[str]] = {}", ""},
		{"    def @f(self, @f: str) -> list[dict]:", "        if not @f:", "            raise ValueError(f\"@w must not be empty: {@f!r}\")",
			"        rows = self.db.execute(", "            \"SELECT @c, @c FROM @t WHERE @c = %s\", (@f,)", "        ).fetchall()",
			"        return [{'@c': r[0], '@c': r[1]} for r in rows]", ""},
		{"@@dataclass", "class @T:", "    @f: str", "    @f: int = 0", "    @f: Optional[datetime] = None", ""},
		{"def test_@f():", "    result = @f(\"@s\")", "    assert result['status'] == 'ok', result", "    assert len(result[\"items\"]) == @n", ""},
		{"logger.info(\"@s %s\", @f)", "try:", "    resp = await client.get(f\"https://@h/v1/@w/{@f}\", timeout=10.0)",
			"    resp.raise_for_status()", "except httpx.HTTPStatusError as exc:", "    logger.warning('@w failed: %s', exc)", "    raise", ""},
	}
	tsBlocks = [][]string{
		{"export async function @i(@i: string, opts: { limit?: number } = {}): Promise<@T[]> {",
			"  const url = `${BASE_URL}/@w/${encodeURIComponent(@i)}?limit=${opts.limit ?? @n}`;",
			"  const res = await fetch(url, { headers: { 'Content-Type': 'application/json' } });",
			"  if (!res.ok) {", "    throw new Error(`@w failed: ${res.status} ${res.statusText}`);", "  }",
			"  return (await res.json()) as @T[];", "}", ""},
		{"interface @T {", "  @i: string;", "  @i?: number;", "  @i: '@w' | '@w' | \"@w\";", "}", ""},
		{"describe('@i', () => {", "  it('@s', async () => {", "    const result = await @i('@w');",
			"    expect(result).toHaveLength(@n);", "    expect(result[0].@i).toBe(\"@s\");", "  });", "});", ""},
		{"const @i = z.object({", "  @i: z.string().min(1),", "  @i: z.number().int().positive().optional(),",
			"  @i: z.enum(['@w', '@w']),", "});", ""},
	}
	sqlBlocks = [][]string{
		{"-- @s", "SELECT o.@c, c.@c, sum(o.amount_cents) AS total", "FROM @t o", "JOIN customers c ON c.id = o.customer_id",
			"WHERE o.created_at >= now() - interval '30 days'", "  AND c.country IN ('DE', 'FR', 'PL')", "GROUP BY 1, 2",
			"ORDER BY total DESC", "LIMIT @n;", ""},
		{"CREATE INDEX CONCURRENTLY IF NOT EXISTS idx_@t_@c ON @t (@c, @c);", ""},
		{"UPDATE @t SET @c = 'archived', updated_at = now() WHERE @c < '2025-01-01' AND note NOT LIKE '%@w%';", ""},
	}
	mdBlocks = [][]string{
		{"## @T", "", "@s @s. @s, @s.", ""},
		{"- [ ] @s", "- [x] @s", "- [ ] @s (see @p)", ""},
		{"```sh", "curl -sS -H \"Accept: application/json\" https://@h/v1/@w | jq '.items[] | {id, status}'", "```", ""},
		{"> **Note**", "> @s — @s.", ""},
		{"| @w | @w | @w |", "| --- | --- | --- |", "| @n | @s | @w |", "| @n | @s | @w |", ""},
		{"Reported by @P (@e): @s.", ""},
	}
)

func (g *gen) blocks(dst []byte, set [][]string, lines int) []byte {
	for n := 0; n < lines; {
		b := pick(g, set)
		for _, l := range b {
			dst = g.expand(dst, l)
			dst = append(dst, '\n')
		}
		n += len(b)
	}
	return dst
}

// sourceFile appends a source file of about lines lines for a path extension.
func (g *gen) sourceFile(dst []byte, ext string, lines int) []byte {
	switch ext {
	case ".go":
		dst = g.expand(dst, "package @w\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n)\n\n")
		return g.blocks(dst, goBlocks, lines)
	case ".py":
		dst = append(dst, "from __future__ import annotations\n\nimport logging\nfrom dataclasses import dataclass\n\nlogger = logging.getLogger(__name__)\n\n"...)
		return g.blocks(dst, pyBlocks, lines)
	case ".ts", ".tsx":
		dst = g.expand(dst, "import { z } from 'zod';\nimport type { @T } from './@w';\n\n")
		return g.blocks(dst, tsBlocks, lines)
	case ".sql":
		return g.blocks(dst, sqlBlocks, lines)
	case ".yaml":
		for i := 0; i < lines; i++ {
			dst = g.expand(dst, pick(g, []string{"@f: @w", "  @f: \"@s\"", "  - name: @w\n    image: ghcr.io/@w/@w:1.@n", "  @f: @n", "# @s"}))
			dst = append(dst, '\n')
		}
		return dst
	case ".json":
		return g.jsonDoc(dst, lines)
	}
	dst = g.expand(dst, "# @T\n\n")
	return g.blocks(dst, mdBlocks, lines)
}

// jsonDoc appends a pretty-printed JSON document (JSON inside text).
func (g *gen) jsonDoc(dst []byte, lines int) []byte {
	dst = append(dst, "{\n"...)
	for i := 0; i < lines; i++ {
		if i > 0 {
			dst = append(dst, ",\n"...)
		}
		switch g.intn(4) {
		case 0:
			dst = g.expand(dst, "  \"@f\": \"@s\"")
		case 1:
			dst = g.expand(dst, "  \"@f\": @n")
		case 2:
			dst = g.expand(dst, "  \"@f\": [\"@w\", \"@w\"]")
		default:
			dst = g.expand(dst, "  \"@f\": {\"enabled\": true, \"path\": \"@p\"}")
		}
	}
	return append(dst, "\n}\n"...)
}

// textLines draws a result's size in lines: mostly tens, sometimes hundreds.
func (g *gen) textLines() int {
	switch x := g.intn(100); {
	case x < 45:
		return g.between(4, 25)
	case x < 85:
		return g.between(25, 80)
	case x < 98:
		return g.between(80, 200)
	default:
		return g.between(200, 600)
	}
}
