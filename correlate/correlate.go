package correlate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"mcptrace/classify"
	"mcptrace/schema"
)

// Stats counts what the correlator saw. Every observation lands in exactly one
// of Contributing, NotificationOnly, Stray, Stderr or Other.
type Stats struct {
	Observations     int64
	Contributing     int64 // carried a request or a response of an exchange
	NotificationOnly int64 // carried only notifications
	Stray            int64 // carried only messages that paired with nothing
	Stderr           int64 // stdio stderr lines
	Other            int64 // e.g. a GET answered 405, a DELETE
	Notifications    int64 // notification messages
	StrayMessages    int64 // responses with no request, unattributable frames
	Exchanges        int64
}

// Add sums two Stats.
func (s *Stats) Add(o Stats) {
	s.Observations += o.Observations
	s.Contributing += o.Contributing
	s.NotificationOnly += o.NotificationOnly
	s.Stray += o.Stray
	s.Stderr += o.Stderr
	s.Other += o.Other
	s.Notifications += o.Notifications
	s.StrayMessages += o.StrayMessages
	s.Exchanges += o.Exchanges
}

// Correlator pairs the messages of the conversations routed to it. It is not
// safe for concurrent use: the pipeline gives each goroutine its own and
// routes every conversation to exactly one of them.
type Correlator struct {
	convs map[string]*conversation
	emit  func(*schema.Exchange)
	Stats Stats
}

// New returns a correlator that hands each finished exchange to emit.
func New(emit func(*schema.Exchange)) *Correlator {
	return &Correlator{convs: map[string]*conversation{}, emit: emit}
}

// ConversationKey returns the key of the conversation an observation belongs
// to; the pipeline routes on it.
func ConversationKey(o *schema.Observation) string {
	switch {
	case o.SessionID != "":
		return string(o.Side) + "|s|" + o.SessionID
	case o.Connection != "":
		return string(o.Side) + "|c|" + o.Pos.Source + "|" + o.Connection
	}
	return string(o.Side) + "|f|" + o.Pos.Source
}

type idKey struct {
	t    schema.IDType
	text string
}

func keyOf(id schema.ID) idKey { return idKey{id.Type, id.Text} }

type conversation struct {
	key      string
	byID     map[idKey][]*exchange // every exchange of the conversation by request id, oldest first
	pending  map[idKey][]pendingResp
	version  string
	client   schema.Implementation
	server   schema.Implementation
	openList []*exchange
}

type pendingResp struct {
	msg      schema.Message
	end      time.Time
	toServer bool
}

type exchange struct {
	row        schema.Exchange
	id         schema.ID
	method     string
	paramsHash uint64
	fromServer bool // initiator is the server
	attempts   []classify.Attempt
	response   *schema.Message
	stray      []schema.Message
	cancelled  bool
	onSession  bool
	final      bool
	retryAfter string
	sseEvents  int32 // events of the final attempt's stream
	reqVersion string
}

func (c *Correlator) conv(o *schema.Observation) *conversation {
	k := ConversationKey(o)
	cv := c.convs[k]
	if cv == nil {
		cv = &conversation{key: k, byID: map[idKey][]*exchange{}, pending: map[idKey][]pendingResp{}}
		c.convs[k] = cv
	}
	return cv
}

// Add feeds one observation, in the order its source wrote it.
func (c *Correlator) Add(o *schema.Observation) {
	c.Stats.Observations++
	cv := c.conv(o)
	if o.ProtocolVersion != "" && cv.version == "" {
		cv.version = o.ProtocolVersion
	}
	if o.ClientName != "" {
		cv.client = schema.Implementation{Name: o.ClientName, Version: o.ClientVersion}
	}
	if o.ServerName != "" {
		cv.server = schema.Implementation{Name: o.ServerName, Version: o.ServerVersion}
	}
	var used, notes, strays int
	if o.HTTP == nil {
		used, notes, strays = c.addStdio(cv, o)
		if o.Stdio == schema.DirStderr {
			c.Stats.Stderr++
			return
		}
	} else {
		used, notes, strays = c.addHTTP(cv, o)
	}
	switch {
	case used > 0:
		c.Stats.Contributing++
	case notes > 0:
		c.Stats.NotificationOnly++
	case strays > 0:
		c.Stats.Stray++
	default:
		c.Stats.Other++
	}
}

func (c *Correlator) addHTTP(cv *conversation, o *schema.Observation) (used, notes, strays int) {
	h := o.HTTP
	var reqs []*schema.Message
	var respMsgs []schema.Message
	for i := range o.Messages {
		m := &o.Messages[i]
		if m.Where == schema.InRequestBody {
			switch m.Kind {
			case schema.MsgRequest:
				reqs = append(reqs, m)
			case schema.MsgNotification:
				notes++
				c.notification(cv, m, false)
			case schema.MsgResponse:
				// The client answering a server request.
				if c.pairResponse(cv, m, o, true) {
					used++
				} else {
					strays++
				}
			default:
				strays++
				c.Stats.StrayMessages++
			}
			continue
		}
		if h.Status == 202 && (m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther) {
			continue // a 202 may say "Accepted" in plain text: not a message
		}
		respMsgs = append(respMsgs, *m)
	}
	onStream := h.Method == "GET"
	for _, rq := range reqs {
		ex := c.attach(cv, o, rq, false)
		used++
		at := classify.Attempt{Responded: h.Responded, Status: h.Status, Failure: h.Failure, ContentType: h.ContentType,
			SSE: h.SSE, StreamEnd: h.StreamEnd, BodyRecorded: h.BodyRecorded, BodyEmpty: h.BodyEmpty}
		for _, m := range respMsgs {
			if len(reqs) > 1 && m.Kind == schema.MsgResponse && !classify.SameID(m.ID, rq.ID) {
				continue // another member of the batch
			}
			if m.Kind == schema.MsgResponse || m.Kind == schema.MsgInvalidJSON || m.Kind == schema.MsgOther {
				at.Messages = append(at.Messages, m)
			}
		}
		ex.attempts = append(ex.attempts, at)
		st := int32(0)
		if h.Responded {
			st = int32(h.Status)
		}
		ex.row.HTTPStatuses = append(ex.row.HTTPStatuses, st)
		ex.row.PostCount++
		ex.row.EndedAt = o.EndOrStart()
		ex.retryAfter = h.RetryAfter
		ex.sseEvents = int32(h.SSEEvents)
		ex.onSession = o.SessionID != ""
		if attemptDecides(&at, rq.ID) || ex.response != nil {
			c.finish(cv, ex)
		}
	}
	// Messages of a response stream that are not the POST's own response:
	// server requests, notifications, and responses delivered on a GET stream.
	for i := range respMsgs {
		m := &respMsgs[i]
		switch m.Kind {
		case schema.MsgNotification:
			notes++
			c.notification(cv, m, true)
		case schema.MsgRequest:
			c.attach(cv, o, m, true)
			used++
		case schema.MsgResponse:
			if onStream || len(reqs) == 0 {
				if c.pairResponse(cv, m, o, false) {
					used++
				} else {
					strays++
				}
			}
		default:
			if len(reqs) == 0 {
				strays++
				c.Stats.StrayMessages++
			}
		}
	}
	return used, notes, strays
}

// attemptDecides reports whether an attempt settles its exchange: a response
// with the request's id, or a definite 2xx body that is not a 202.
func attemptDecides(at *classify.Attempt, id schema.ID) bool {
	for i := range at.Messages {
		if at.Messages[i].Kind == schema.MsgResponse && classify.SameID(at.Messages[i].ID, id) {
			return true
		}
	}
	if !at.Responded || at.Status < 200 || at.Status > 299 || at.Status == 202 || !at.BodyRecorded || at.SSE {
		return false
	}
	return true
}

func (c *Correlator) addStdio(cv *conversation, o *schema.Observation) (used, notes, strays int) {
	fromServer := o.Stdio == schema.DirServerToClient
	for i := range o.Messages {
		m := &o.Messages[i]
		switch m.Kind {
		case schema.MsgRequest:
			ex := c.attach(cv, o, m, fromServer)
			if ex.response != nil {
				c.finish(cv, ex)
			}
			used++
		case schema.MsgNotification:
			notes++
			c.notification(cv, m, fromServer)
		case schema.MsgResponse:
			if c.pairResponse(cv, m, o, !fromServer) {
				used++
			} else {
				strays++
			}
		default:
			// A frame that is not JSON-RPC: blame the one open request of the
			// other side, if there is exactly one.
			var only *exchange
			n := 0
			for _, ex := range cv.openList {
				if !ex.final && ex.fromServer != fromServer {
					only = ex
					n++
				}
			}
			if n == 1 {
				only.stray = append(only.stray, *m)
				only.row.EndedAt = o.EndOrStart()
				used++
			} else {
				strays++
				c.Stats.StrayMessages++
			}
		}
	}
	return used, notes, strays
}

// attach finds the exchange a request belongs to, or starts one.
func (c *Correlator) attach(cv *conversation, o *schema.Observation, m *schema.Message, fromServer bool) *exchange {
	k := keyOf(m.ID)
	list := cv.byID[k]
	var prev *exchange
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].fromServer == fromServer {
			prev = list[i]
			break
		}
	}
	retryOrigin, retryOf := "none", ""
	if prev != nil && prev.paramsHash == m.ParamsHash && m.ID.Valid() {
		switch o.Trigger {
		case schema.TriggerApplication, schema.TriggerManual:
			retryOrigin, retryOf = o.Trigger, prev.row.ExchangeID
		default:
			if !prev.final && o.HTTP != nil {
				prev.row.RetryOrigin = "sdk"
				return prev
			}
			if o.HTTP != nil || o.Trigger != "" {
				retryOrigin, retryOf = orSDK(o.Trigger), prev.row.ExchangeID
			}
		}
	}
	ex := &exchange{id: m.ID, method: m.Method, paramsHash: m.ParamsHash, fromServer: fromServer}
	r := &ex.row
	r.ExchangeID = exchangeID(o.Pos, m)
	r.Source = o.Pos.Source
	r.SourceLine = o.Pos.Line
	r.Sides = string(o.Side)
	r.Initiator = "client"
	if fromServer {
		r.Initiator = "server"
	}
	r.StartedAt = o.Time
	r.EndedAt = o.EndOrStart()
	r.Transport = string(o.Transport)
	r.SessionID = schema.Str(o.SessionID)
	r.Method = m.Method
	r.HTTPStatuses = []int32{}
	if m.ID.Valid() {
		r.JSONRPCID = schema.Str(m.ID.Text)
		t := m.ID.Type.String()
		r.JSONRPCIDType = &t
	}
	r.RetryOrigin = retryOrigin
	r.RetryOf = schema.Str(retryOf)
	r.Scenario = schema.Str(o.Scenario)
	if o.ClientName != "" {
		r.ClientName, r.ClientVersion = schema.Str(o.ClientName), schema.Str(o.ClientVersion)
	}
	if o.ServerName != "" {
		r.ServerName, r.ServerVersion = schema.Str(o.ServerName), schema.Str(o.ServerVersion)
	}
	p := gjson.GetBytes(m.Raw, "params")
	if m.Method == "tools/call" || m.Method == "prompts/get" {
		if n := p.Get("name"); n.Type == gjson.String {
			r.ToolName = schema.Str(n.Str)
		}
	}
	ex.reqVersion = o.ProtocolVersion
	if ex.reqVersion == "" {
		ex.reqVersion = p.Get(`_meta.io\.modelcontextprotocol/protocolVersion`).String()
	}
	if m.Method == "initialize" {
		if ci := p.Get("clientInfo"); ci.IsObject() {
			cv.client = schema.Implementation{Name: ci.Get("name").String(), Version: ci.Get("version").String()}
		}
	} else if ci := p.Get(`_meta.io\.modelcontextprotocol/clientInfo`); ci.IsObject() && cv.client.Name == "" {
		cv.client = schema.Implementation{Name: ci.Get("name").String(), Version: ci.Get("version").String()}
	}
	cv.byID[k] = append(cv.byID[k], ex)
	cv.openList = append(cv.openList, ex)
	c.Stats.Exchanges++
	// A response that arrived before its request.
	if pend := cv.pending[k]; len(pend) > 0 {
		for i, p := range pend {
			if p.toServer == fromServer {
				msg := p.msg
				ex.response = &msg
				ex.row.EndedAt = p.end
				cv.pending[k] = append(pend[:i:i], pend[i+1:]...)
				break
			}
		}
	}
	return ex
}

func orSDK(t string) string {
	if t == "" {
		return "sdk"
	}
	return t
}

func exchangeID(pos schema.Position, m *schema.Message) string {
	h := sha256.New()
	h.Write([]byte(pos.Source))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, pos.Line, 10))
	h.Write([]byte{0, byte(m.ID.Type)})
	h.Write([]byte(m.ID.Text))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(m.BatchIndex), 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(m.Event), 10))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// pairResponse pairs a response with the oldest open request of its id sent
// by the other side. toServer says the response travels client to server
// (it answers a server-initiated request).
func (c *Correlator) pairResponse(cv *conversation, m *schema.Message, o *schema.Observation, toServer bool) bool {
	k := keyOf(m.ID)
	for _, ex := range cv.byID[k] {
		if ex.final || ex.fromServer != toServer {
			continue
		}
		mm := *m
		ex.response = &mm
		ex.row.EndedAt = o.EndOrStart()
		c.finish(cv, ex)
		return true
	}
	if m.ID.Valid() {
		cv.pending[k] = append(cv.pending[k], pendingResp{msg: *m, end: o.EndOrStart(), toServer: toServer})
		return true // counted as used; unpaired ones are counted at Flush
	}
	c.Stats.StrayMessages++
	return false
}

func (c *Correlator) notification(cv *conversation, m *schema.Message, fromServer bool) {
	c.Stats.Notifications++
	if m.Method != "notifications/cancelled" {
		return
	}
	rid := gjson.GetBytes(m.Raw, "params.requestId")
	id := schema.ID{Type: schema.IDNumber, Text: rid.Raw}
	if rid.Type == gjson.String {
		id = schema.ID{Type: schema.IDString, Text: rid.Str}
	} else if rid.Type != gjson.Number {
		return
	}
	list := cv.byID[keyOf(id)]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].fromServer == fromServer && !list[i].final {
			list[i].cancelled = true
			return
		}
	}
}

// finish judges an exchange and emits it.
func (c *Correlator) finish(cv *conversation, ex *exchange) {
	if ex.final {
		return
	}
	ex.final = true
	r := &ex.row
	version := ex.reqVersion
	if version == "" {
		version = cv.version
	}
	ev := classify.Evidence{Method: ex.method, ProtocolVersion: version, ID: ex.id, Attempts: ex.attempts,
		Response: ex.response, Stray: ex.stray, Cancelled: ex.cancelled, OnSession: ex.onSession}
	v := classify.Classify(&ev)
	r.Outcome, r.Layer, r.Reason, r.RetryAdvice = v.Outcome, v.Layer, v.Reason, v.RetryAdvice
	r.ErrorCode = v.ErrorCode
	r.ErrorMessage = schema.Str(v.ErrorMessage)
	r.ErrorType = schema.Str(v.ErrorType)
	r.ResultType = schema.Str(v.ResultType)
	r.IsError = v.IsError
	r.Cancelled = ex.cancelled
	r.ProtocolVersion = schema.Str(version)
	if n := len(ex.attempts); n > 0 {
		last := &ex.attempts[n-1]
		r.ContentType = schema.Str(last.ContentType)
		r.TransportFail = schema.Str(last.Failure)
		if last.SSE {
			events := ex.sseEvents
			r.SSEEvents = &events
			complete := v.Judged != nil && v.Judged.Where == schema.InPostStream
			r.StreamComplete = &complete
			r.StreamEnd = schema.Str(last.StreamEnd)
		}
	}
	if v.Judged != nil {
		w := v.Judged.Where.String()
		r.ResponseWhere = &w
		if ex.method == "initialize" && v.Outcome == classify.Success {
			res := gjson.GetBytes(v.Judged.Raw, "result")
			cv.version = res.Get("protocolVersion").String()
			if si := res.Get("serverInfo"); si.IsObject() {
				cv.server = schema.Implementation{Name: si.Get("name").String(), Version: si.Get("version").String()}
			}
		}
	}
	if (v.Outcome != classify.NoResponse && v.Outcome != classify.Cancelled && v.Outcome != classify.Unknown) || ex.response != nil {
		ms := float64(r.EndedAt.Sub(r.StartedAt).Microseconds()) / 1000
		r.LatencyMS = &ms
	}
	r.RetryAfter = schema.Str(ex.retryAfter)
	if r.ClientName == nil && cv.client.Name != "" {
		r.ClientName, r.ClientVersion = schema.Str(cv.client.Name), schema.Str(cv.client.Version)
	}
	if r.ServerName == nil && cv.server.Name != "" {
		r.ServerName, r.ServerVersion = schema.Str(cv.server.Name), schema.Str(cv.server.Version)
	}
	// Bodies are no longer needed once judged.
	ex.attempts, ex.response, ex.stray = nil, nil, nil
	c.emit(r)
	c.prune(cv)
}

// prune drops finished exchanges from the open list.
func (c *Correlator) prune(cv *conversation) {
	if len(cv.openList) < 64 {
		return
	}
	keep := cv.openList[:0]
	for _, ex := range cv.openList {
		if !ex.final {
			keep = append(keep, ex)
		}
	}
	for i := len(keep); i < len(cv.openList); i++ {
		cv.openList[i] = nil
	}
	cv.openList = keep
}

// Flush judges every exchange still open (end of input) and counts responses
// that never found their request.
func (c *Correlator) Flush() {
	for _, cv := range c.convs {
		for _, ex := range cv.openList {
			c.finish(cv, ex)
		}
		for _, p := range cv.pending {
			c.Stats.StrayMessages += int64(len(p))
		}
	}
	c.convs = map[string]*conversation{}
}
