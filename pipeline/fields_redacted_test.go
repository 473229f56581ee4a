package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"mcptrace/redact"
	"mcptrace/schema"
)

// computedColumns are the text columns mcptrace computes itself (fixed
// vocabularies, ids it makes, keyed hashes): nothing from the input reaches
// them, so the policy does not name them. notWritten are the fields of the
// row types that never reach a file. A text column in neither list nor in
// the policy's list (redact.Fields) fails TestEveryTextColumnIsRedacted:
// a new column cannot reach the output unredacted by accident.
var (
	computedColumns = map[string]string{
		"exchanges.exchange_id":              "an id mcptrace makes",
		"exchanges.sides":                    "client, server or both",
		"exchanges.initiator":                "client or server",
		"exchanges.transport":                "fixed vocabulary",
		"exchanges.jsonrpc_id_type":          "string, number or null",
		"exchanges.stream_end":               "fixed vocabulary",
		"exchanges.transport_failure":        "fixed vocabulary",
		"exchanges.response_where":           "fixed vocabulary",
		"exchanges.outcome":                  "fixed vocabulary",
		"exchanges.layer":                    "fixed vocabulary",
		"exchanges.arguments_hash":           "keyed HMAC of the arguments",
		"exchanges.format":                   "the input format's name",
		"exchanges.retry_origin":             "fixed vocabulary",
		"exchanges.retry_of":                 "an exchange_id",
		"exchanges.retry_advice":             "fixed vocabulary",
		"exchanges.retry_basis":              "fixed vocabulary",
		"exchanges.duplicate_of":             "an exchange_id",
		"exchanges.continues":                "an exchange_id",
		"exchanges.chain_outcome":            "fixed vocabulary",
		"exchanges.error_kind":               "fixed vocabulary",
		"exchanges.rpc_response_status_code": "the JSON-RPC error code (an integer) as text",
		"exchanges.suspect_reason":           "fixed vocabulary",
		"exchanges.session_stuck_reason":     "fixed vocabulary",
		"exchanges.resume_problem":           "fixed vocabulary",
		"exchanges.failed_hop":               "fixed vocabulary",
		"exchanges.server_outcome":           "fixed vocabulary",
		"quarantine.reason":                  "fixed vocabulary",
	}
	notWritten = map[string]bool{
		"Exchange.ConvKey": true, "Exchange.ServerSource": true, "Exchange.ServerExchangeID": true, "Exchange.Arguments": true,
	}
)

// textColumns lists the text fields of a row type (string, *string,
// []byte) by column name, and the Go field of each.
func textColumns(t *testing.T, table string, v any) map[string]string {
	t.Helper()
	cols := map[string]string{}
	typ := reflect.TypeOf(v)
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		text := ft.Kind() == reflect.String || ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8
		if !text && ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}) {
			t.Errorf("%s.%s: a struct field; walk it too", typ.Name(), f.Name)
		}
		if !text {
			continue
		}
		tag := strings.Split(f.Tag.Get("parquet"), ",")[0]
		if tag == "-" {
			if !notWritten[typ.Name()+"."+f.Name] {
				t.Errorf("%s.%s is not written (parquet:\"-\") but not in notWritten", typ.Name(), f.Name)
			}
			continue
		}
		if tag == "" {
			t.Errorf("%s.%s has no parquet column name", typ.Name(), f.Name)
			continue
		}
		cols[table+"."+tag] = f.Name
	}
	return cols
}

func TestEveryTextColumnIsRedacted(t *testing.T) {
	policyFields := map[string]bool{}
	for _, f := range redact.Fields {
		policyFields[f.Name] = true
	}
	cols := textColumns(t, "exchanges", schema.Exchange{})
	for k, v := range textColumns(t, "quarantine", schema.Quarantine{}) {
		cols[k] = v
	}
	for col, field := range cols {
		switch inPolicy, computed := policyFields[col], computedColumns[col] != ""; {
		case inPolicy && computed:
			t.Errorf("%s (%s) is both in the policy and computed", col, field)
		case !inPolicy && !computed:
			t.Errorf("text column %s (%s) is neither in the redaction policy (redact.Fields) nor a computed column", col, field)
		}
	}
	for name := range policyFields {
		if cols[name] == "" {
			t.Errorf("policy field %s is no text column", name)
		}
	}
	for name := range computedColumns {
		if cols[name] == "" {
			t.Errorf("computed column %s is no text column", name)
		}
	}
	if len(cols) < 40 {
		t.Errorf("only %d text columns found", len(cols))
	}
}

// And the policy's fields are the ones redaction applies it to: a canary
// in every text field of a row is gone from every policy field, under every
// action but keep.
func TestPolicyFieldsAreRedacted(t *testing.T) {
	const canary = "ghp_FieldCanary0123456789abcdefABCDEFghij"
	cols := textColumns(t, "exchanges", schema.Exchange{})
	for k, v := range textColumns(t, "quarantine", schema.Quarantine{}) {
		cols[k] = v
	}
	key, _ := redact.NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	dir := t.TempDir()
	for _, action := range []string{"mask", "pseudonymize", "truncate(300)", "drop"} {
		var y strings.Builder
		y.WriteString("fields:\n")
		for _, f := range redact.Fields {
			y.WriteString("  " + f.Name + ": " + action + "\n")
		}
		p := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(p, []byte(y.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		pol, err := redact.LoadPolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		rd := &redact.Redactor{Policy: pol, Pseud: key, Stats: &redact.Stats{}}
		var e schema.Exchange
		ev := reflect.ValueOf(&e).Elem()
		for i := 0; i < ev.NumField(); i++ {
			f := ev.Field(i)
			switch {
			case f.Kind() == reflect.String:
				f.SetString("x " + canary + " y")
			case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.String:
				s := "x " + canary + " y"
				f.Set(reflect.ValueOf(&s))
			}
		}
		e.Arguments = []byte(`{"q":"` + canary + `","` + canary + `":1}`)
		out := RedactExchange(e, rd)
		q := quarantineRow(rd, "x "+canary, 1, time.Now(), ReasonUnknownFormat, "x "+canary, 10, []byte("x "+canary))
		q2 := quarantineRow(rd, "x "+canary, 1, time.Now(), "bad_json", "x "+canary, 10, []byte("x "+canary))
		rows := map[string]reflect.Value{"exchanges": reflect.ValueOf(out), "quarantine": reflect.ValueOf(q), "quarantine2": reflect.ValueOf(q2)}
		for _, f := range redact.Fields {
			table, _, _ := strings.Cut(f.Name, ".")
			for _, r := range []string{table, table + "2"} {
				row, ok := rows[r]
				if !ok {
					continue
				}
				v := row.FieldByName(cols[f.Name])
				if v.Kind() == reflect.Pointer {
					if v.IsNil() {
						continue
					}
					v = v.Elem()
				}
				if strings.Contains(v.String(), canary[4:20]) {
					t.Errorf("%s: %s (%s) keeps the canary: %q", action, f.Name, r, v.String())
				}
			}
		}
	}
}
