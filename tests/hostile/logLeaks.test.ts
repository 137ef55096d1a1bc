import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { logger } from '../../lib/observability/logger.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import {
  caseInput,
  personalValues,
  salesRegistrationInput,
  uniqueFrame,
} from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { LEAK_MARKER, MARKER_DOB, marked, markedEmail, markerValues } from '../../testkit/leakMarkers.ts';
import { describeLeaks, findLeaksInDirectory, findLeaksInText } from '../../testkit/logScan.ts';

const captureFile = () => join(inject('logCaptureDir'), `worker-${process.pid}.log`);

describe('the log scan', () => {
  it('finds a planted personal value, in any case, with its line', () => {
    const text = '{"level":"INFO","message":"ok"}\n{"level":"ERROR","name":"ALEXANDRA"}\n';
    expect(findLeaksInText(text, personalValues, 'w.log')).toEqual([
      { value: 'Alexandra', file: 'w.log', line: 2 },
    ]);
    expect(findLeaksInText('{"requestId":"1","count":1}\n', personalValues, 'w.log')).toEqual([]);
  });

  it('scans every capture file of a directory and describes what it found', () => {
    const directory = mkdtempSync(join(tmpdir(), 'log-scan-test-'));
    try {
      writeFileSync(join(directory, 'worker-1.log'), 'clean\n');
      writeFileSync(join(directory, 'worker-2.log'), `x\ny ${marked('Smith')} z\n`);
      writeFileSync(join(directory, 'notes.txt'), marked());
      const leaks = findLeaksInDirectory(directory, [...personalValues, ...markerValues]);
      expect(leaks).toEqual([{ value: LEAK_MARKER, file: 'worker-2.log', line: 2 }]);
      expect(describeLeaks(directory, leaks)).toContain(`"${LEAK_MARKER}" in worker-2.log, line 2`);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('covers the factories personal values and the markers of generated records', () => {
    const sale = salesRegistrationInput();
    const kase = caseInput();
    for (const value of [
      sale.Name,
      sale.Name2,
      sale.Street,
      sale.email,
      sale.Phone,
      kase.firstName,
      kase.surname,
      kase.email,
      kase.mobile,
    ])
      expect(personalValues).toContain(value);
    expect(markerValues).toEqual([LEAK_MARKER, MARKER_DOB]);
  });
});

describe('the capture of worker output', () => {
  it('holds what the logger, console and the process streams wrote', () => {
    const probe = `capture-probe-${randomUUID()}`;
    logger.info('probe', { probe: `${probe}-logger` });
    console.log(`${probe}-console`);
    console.error(`${probe}-console-error`);
    process.stderr.write(`${probe}-stderr\n`);
    const captured = readFileSync(captureFile(), 'utf8');
    for (const suffix of ['logger', 'console', 'console-error', 'stderr'])
      expect(captured).toContain(`${probe}-${suffix}`);
  });
});

describe('the service logs no personal data', () => {
  beforeAll(async () => {
    await isolatedAws();
  });

  it('neither for accepted nor for refused nor for failed requests', async () => {
    const person = {
      Name: marked('Surname'),
      Name2: marked('Given'),
      Street: marked(' Street 1'),
      Phone: marked('+61'),
      email: markedEmail('sale'),
      DOB: MARKER_DOB,
    };
    const sale = salesRegistrationInput({ FrameNum: uniqueFrame(), ...person });
    const kase = caseInput({
      firstName: marked('F'),
      surname: marked('S'),
      email: markedEmail('case'),
      mobile: marked('M'),
    });
    const responses = [
      await salesHandler(jsonPost('/erp/sales_registration', [sale]), lambdaContext()),
      await salesHandler(
        jsonPost('/erp/sales_registration', [{ ...sale, email: marked() }]),
        lambdaContext(),
      ),
      await caseHandler(jsonPost('/crm/case', kase), lambdaContext()),
      await caseHandler(jsonPost('/crm/case', { ...kase, email: marked() }), lambdaContext()),
    ];
    const table = process.env.RECORDS_TABLE;
    process.env.RECORDS_TABLE = '';
    resetSettings();
    try {
      responses.push(
        await caseHandler(jsonPost('/crm/case', { ...kase, frameNo: uniqueFrame() }), lambdaContext()),
      );
    } finally {
      process.env.RECORDS_TABLE = table;
      resetSettings();
    }
    expect(responses.map((r) => r.statusCode)).toEqual([200, 400, 200, 400, 500]);
    // No answer echoes a value either: refusals name the field and the rule only.
    for (const response of responses) expect(response.body).not.toContain(LEAK_MARKER);
    expect(findLeaksInText(readFileSync(captureFile(), 'utf8'), markerValues, 'this worker')).toEqual([]);
  });
});
