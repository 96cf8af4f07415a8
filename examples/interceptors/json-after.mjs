// After interceptor: JSON pass-through. The hive's Result becomes the response body and its Code
// the HTTP status.
export default function after(type, value) {
  if (type !== 'json') return { data: null, status: 'Not supported type', status_code: 400 };
  return { data: value, status: value.Message ?? 'OK', status_code: value.Code ?? 200 };
}
