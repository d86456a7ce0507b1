package strictjson

import (
	"fmt"
	"reflect"
	"unsafe"
)

// Project copies into dst, a non-nil pointer to a projection of src's type
// (see UnmarshalProjection), the fields it has: the value UnmarshalProjection
// would store from the JSON of *src. It is for values decoded some other
// way, such as by the canonical decoder. Strings and the values of
// identical types are shared, not copied.
func Project(dst, src any) error {
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || d.IsNil() || s.Kind() != reflect.Pointer || s.IsNil() {
		return fmt.Errorf("strictjson: need two non-nil pointers, got %T and %T", dst, src)
	}
	c := &compiler{plans: map[reflect.Type]*plan{}, checks: map[reflect.Type]*plan{}, projections: map[[2]reflect.Type]*plan{}}
	c.project(s.Type().Elem(), d.Type().Elem(), "")
	if c.err != nil {
		return c.err
	}
	c.copy(d.Elem(), s.Elem())
	return nil
}

// copy sets dst, a projection of src's type that compiles, from src.
func (c *compiler) copy(dst, src reflect.Value) {
	if dst.Type() == src.Type() {
		dst.Set(src)
		return
	}
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		dst.Set(reflect.New(dst.Type().Elem()))
		c.copy(dst.Elem(), src.Elem())
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			c.copy(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return
		}
		dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(dst.Type().Elem()).Elem()
			c.copy(v, it.Value())
			dst.SetMapIndex(it.Key().Convert(dst.Type().Key()), v)
		}
	case reflect.Struct:
		if !src.CanAddr() {
			cp := reflect.New(src.Type()).Elem()
			cp.Set(src)
			src = cp
		}
		from := map[string]jsonField{}
		for _, f := range c.fields(src.Type()) {
			from[f.name] = f
		}
		for _, f := range c.fields(dst.Type()) {
			sf := from[f.name]
			c.copy(fieldValue(dst, f), fieldValue(src, sf))
		}
	default:
		dst.Set(src.Convert(dst.Type()))
	}
}

// fieldValue is the field f of the addressable struct v.
func fieldValue(v reflect.Value, f jsonField) reflect.Value {
	return reflect.NewAt(f.t, unsafe.Add(v.Addr().UnsafePointer(), f.offset)).Elem()
}
