package qdranttest

import (
	"slices"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// matchFilter evaluates a Qdrant filter on one point: every must, at least
// one should (when there are any), no must_not. A nil filter matches.
func matchFilter(f *qdrant.Filter, key string, pt *point) (bool, error) {
	if f == nil {
		return true, nil
	}
	if f.MinShould != nil {
		return false, unimplemented("min_should")
	}
	for _, c := range f.GetMust() {
		ok, err := matchCondition(c, key, pt)
		if err != nil || !ok {
			return false, err
		}
	}
	for _, c := range f.GetMustNot() {
		ok, err := matchCondition(c, key, pt)
		if err != nil || ok {
			return false, err
		}
	}
	if len(f.GetShould()) == 0 {
		return true, nil
	}
	for _, c := range f.GetShould() {
		ok, err := matchCondition(c, key, pt)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func matchCondition(c *qdrant.Condition, key string, pt *point) (bool, error) {
	switch x := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Field:
		return matchField(x.Field, pt)
	case *qdrant.Condition_HasId:
		for _, id := range x.HasId.GetHasId() {
			k, err := pointKey(id)
			if err != nil {
				return false, err
			}
			if k == key {
				return true, nil
			}
		}
		return false, nil
	case *qdrant.Condition_Filter:
		return matchFilter(x.Filter, key, pt)
	case *qdrant.Condition_IsEmpty:
		v, ok := pt.payload[x.IsEmpty.GetKey()]
		return !ok || isNull(v) || (v.GetListValue() != nil && len(v.GetListValue().GetValues()) == 0), nil
	case *qdrant.Condition_IsNull:
		v, ok := pt.payload[x.IsNull.GetKey()]
		return ok && isNull(v), nil
	case nil:
		return false, status.Error(codes.InvalidArgument, "Wrong input: empty condition")
	}
	return false, unimplemented("nested and has_vector conditions")
}

func isNull(v *qdrant.Value) bool {
	_, ok := v.GetKind().(*qdrant.Value_NullValue)
	return ok
}

// values flattens a payload value: a list's elements, or the value itself.
func values(v *qdrant.Value) []*qdrant.Value {
	if l, ok := v.GetKind().(*qdrant.Value_ListValue); ok {
		return l.ListValue.GetValues()
	}
	return []*qdrant.Value{v}
}

func matchField(fc *qdrant.FieldCondition, pt *point) (bool, error) {
	if fc.GeoBoundingBox != nil || fc.GeoRadius != nil || fc.GeoPolygon != nil || fc.ValuesCount != nil || fc.DatetimeRange != nil || fc.IsEmpty != nil || fc.IsNull != nil {
		return false, unimplemented("geo, values_count, datetime, is_empty and is_null field conditions")
	}
	if fc.GetKey() == "" {
		return false, status.Error(codes.InvalidArgument, "Validation error: condition key is empty")
	}
	v, present := pt.payload[fc.GetKey()]
	switch {
	case fc.Match != nil && fc.Range != nil:
		return false, status.Error(codes.InvalidArgument, "Wrong input: a field condition has one of match and range")
	case fc.Match != nil:
		if !present {
			return false, nil
		}
		return matchValue(fc.Match, values(v))
	case fc.Range != nil:
		if !present {
			return false, nil
		}
		r := fc.Range
		for _, e := range values(v) {
			var f float64
			switch n := e.GetKind().(type) {
			case *qdrant.Value_DoubleValue:
				f = n.DoubleValue
			case *qdrant.Value_IntegerValue:
				f = float64(n.IntegerValue)
			default:
				continue
			}
			if (r.Gte == nil || f >= *r.Gte) && (r.Gt == nil || f > *r.Gt) &&
				(r.Lte == nil || f <= *r.Lte) && (r.Lt == nil || f < *r.Lt) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, status.Error(codes.InvalidArgument, "Wrong input: field condition has no match or range")
}

func matchValue(m *qdrant.Match, vs []*qdrant.Value) (bool, error) {
	anyOf := func(pred func(*qdrant.Value) bool) bool { return slices.ContainsFunc(vs, pred) }
	switch x := m.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		return anyOf(func(v *qdrant.Value) bool {
			s, ok := v.GetKind().(*qdrant.Value_StringValue)
			return ok && s.StringValue == x.Keyword
		}), nil
	case *qdrant.Match_Keywords:
		return anyOf(func(v *qdrant.Value) bool {
			s, ok := v.GetKind().(*qdrant.Value_StringValue)
			return ok && slices.Contains(x.Keywords.GetStrings(), s.StringValue)
		}), nil
	case *qdrant.Match_Boolean:
		return anyOf(func(v *qdrant.Value) bool {
			b, ok := v.GetKind().(*qdrant.Value_BoolValue)
			return ok && b.BoolValue == x.Boolean
		}), nil
	case *qdrant.Match_Integer:
		return anyOf(func(v *qdrant.Value) bool {
			i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
			return ok && i.IntegerValue == x.Integer
		}), nil
	case *qdrant.Match_Integers:
		return anyOf(func(v *qdrant.Value) bool {
			i, ok := v.GetKind().(*qdrant.Value_IntegerValue)
			return ok && slices.Contains(x.Integers.GetIntegers(), i.IntegerValue)
		}), nil
	case nil:
		return false, status.Error(codes.InvalidArgument, "Wrong input: empty match")
	}
	return false, unimplemented("text, phrase and except matches")
}
