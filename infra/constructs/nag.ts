/** Naming cdk-nag findings, so that an acknowledgement answers exactly the finding it is meant for. */

/**
 * A resolved ARN written the way cdk-nag names it in an AwsSolutions-IAM5 finding (its `flattenCfnReference`):
 * `{"Fn::GetAtt": ["Bucket", "Arn"]}` + `/prefix*` → `<Bucket.Arn>/prefix*`. The acknowledgement must name the
 * finding exactly; the cdk-nag test checks that every acknowledgement answers a finding.
 */
export function nagResource(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const o = node as Record<string, unknown>;
  if (Array.isArray(o['Fn::Join'])) {
    const [delimiter, items] = o['Fn::Join'] as [string, unknown[]];
    return items.map(nagResource).join(delimiter);
  }
  if (o['Fn::Sub'] !== undefined) return nagResource(o['Fn::Sub']);
  if (Array.isArray(o['Fn::GetAtt'])) {
    const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown];
    return `<${nagResource(resource)}.${nagResource(attribute)}>`;
  }
  if (o['Fn::ImportValue'] !== undefined) return nagResource(o['Fn::ImportValue']);
  if (o.Ref !== undefined) return `<${nagResource(o.Ref)}>`;
  return JSON.stringify(node);
}
