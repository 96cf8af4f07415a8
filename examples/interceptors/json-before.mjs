// Before interceptor: JSON pass-through. A body that already is a protocol message goes on as it is;
// a plain JSON object of name -> list of strings becomes the Data of a message whose Class and
// Operation come from the request path (/<class>/<operation>).
export default function before(type, value, options) {
  if (type !== 'json') return { data: null, status: 'Not supported type', status_code: 400 };
  if (value === '' || value === null || value === undefined) return { data: null, status: 'Empty payload', status_code: 400 };
  if (typeof value === 'object' && 'Data' in value) return { data: value, status: 'OK', status_code: 200 };
  const request = JSON.parse(options.http_request ?? '{}');
  const [cls = '', operation = ''] = String(request.path ?? '/').split('/').filter(Boolean);
  return { data: { Class: cls, Operation: operation, Data: value }, status: 'OK', status_code: 200 };
}
