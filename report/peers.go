package report

import (
	"context"
	"fmt"
)

// Peers is the clients-and-servers report: outcome rates per
// client_name@client_version and per server_name@server_version.
func (d *Dataset) Peers(ctx context.Context, limit int) (*Report, error) {
	r := &Report{Name: "clients", Title: "Clients and servers"}
	for _, who := range []string{"client", "server"} {
		t, err := d.table(ctx, who+"s", "Per "+who+" ("+who+"_name@"+who+"_version)",
			"rates over the "+who+"'s exchanges; false-success rate over those whose final status was 2xx",
			[]Column{{Name: who, Kind: Text}, {Name: "exchanges", Kind: Int},
				{Name: "success_rate", Kind: Rate, Head: "success"}, {Name: "failure_rate", Kind: Rate, Head: "failure"},
				{Name: "transport_rate", Kind: Rate, Head: "transport"}, {Name: "protocol_rate", Kind: Rate, Head: "protocol"},
				{Name: "tool_error_rate", Kind: Rate, Head: "tool error"}, {Name: "interaction_rate", Kind: Rate, Head: "interaction"},
				{Name: "false_successes", Kind: Int, Head: "false succ."}, {Name: "false_success_rate", Kind: Rate, Head: "false-succ. rate"}},
			fmt.Sprintf(`SELECT coalesce(%[1]s_name, '(unknown)') || coalesce('@' || %[1]s_version, '') AS who, count(*) AS n,
				count(*) FILTER (WHERE outcome IN ('SUCCESS', 'TOOL_SUCCESS'))::DOUBLE / count(*),
				count(*) FILTER (WHERE failed)::DOUBLE / count(*),
				count(*) FILTER (WHERE layer = 'transport')::DOUBLE / count(*),
				count(*) FILTER (WHERE layer = 'protocol')::DOUBLE / count(*),
				count(*) FILTER (WHERE outcome = 'TOOL_ERROR')::DOUBLE / count(*),
				count(*) FILTER (WHERE layer = 'interaction')::DOUBLE / count(*),
				count(false_success), count(false_success)::DOUBLE / nullif(count(*) FILTER (WHERE %[2]s), 0)
			FROM ex GROUP BY who ORDER BY n DESC, who`, who, is2xx)+limitSQL(limit))
		if err != nil {
			return nil, err
		}
		r.Tables = append(r.Tables, t)
	}
	return r, nil
}
