// Before interceptor for the HTTP client: the message's Data becomes the JSON request body.
export default function before(type, value) {
  if (type !== 'json' || value === null || typeof value !== 'object') return { data: null, status: 'Not supported type', status_code: 400 };
  return { data: value.Data ?? {}, status: 'OK', status_code: 200 };
}
