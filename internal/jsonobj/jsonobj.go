// Package jsonobj reads members of JSON objects the way JSON.parse does: when
// a key is repeated, the last one wins.
//
// gjson's Get returns the first member of a repeated key, while JavaScript
// clients (JSON.parse), Python's json module and Go's encoding/json all keep
// the last. A verdict resting on the first of two "isError" members would
// judge a message the client read differently, so every field that decides a
// verdict (jsonrpc, id, method, result, error, code, message, resultType,
// content, isError, params.name, requestId, protocolVersion) is read through
// this package.
package jsonobj

import "github.com/tidwall/gjson"

// Get returns the last member of obj named key (compared after unescaping,
// as JSON.parse compares them), or a Result that does not exist when obj is
// not an object or has no such member. Unlike gjson.Get, key is a plain
// name, never a path: dots and wildcards in it are literal.
func Get(obj gjson.Result, key string) gjson.Result {
	var last gjson.Result
	if !obj.IsObject() {
		return last
	}
	obj.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			last = v
		}
		return true
	})
	return last
}

// Path follows keys from obj, each step with Get: Path(m, "result",
// "isError") is the last "isError" of the last "result".
func Path(obj gjson.Result, keys ...string) gjson.Result {
	for _, k := range keys {
		obj = Get(obj, k)
		if !obj.Exists() {
			return obj
		}
	}
	return obj
}

// Pick fills dst[i] with the last member named keys[i], in one pass over obj
// (members not present, and every member when obj is not an object, stay
// a Result that does not exist). dst must be at least as long as keys.
func Pick(obj gjson.Result, dst []gjson.Result, keys ...string) {
	for i := range keys {
		dst[i] = gjson.Result{}
	}
	if !obj.IsObject() {
		return
	}
	obj.ForEach(func(k, v gjson.Result) bool {
		for i, key := range keys {
			if k.Str == key {
				dst[i] = v
			}
		}
		return true
	})
}
