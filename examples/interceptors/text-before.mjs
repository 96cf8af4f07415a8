// Before interceptor for text and simple XML bodies: every <name>value</name> element of an XML body
// becomes Data name: [value, ...]; any other text becomes Data text: [the whole body]. Other raw
// types are refused, as the spec's examples do.
export default function before(type, value, options) {
  if (type !== 'text') return { data: null, status: 'Not supported raw types', status_code: 400 };
  if (value === '') return { data: null, status: 'Empty payload', status_code: 400 };
  const request = JSON.parse(options.http_request ?? '{}');
  const [cls = 'text', operation = 'input'] = String(request.path ?? '/').split('/').filter(Boolean);
  const data = Object.create(null);
  const element = /<([A-Za-z_][\w.-]*)>([^<]*)<\/\1>/g;
  let m;
  while ((m = element.exec(value)) !== null) (data[m[1]] ??= []).push(m[2]);
  if (Object.keys(data).length === 0) data.text = [value];
  return { data: { Class: cls, Operation: operation, Data: data }, status: 'OK', status_code: 200 };
}
