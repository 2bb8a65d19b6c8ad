// The part of the PKCS#11 (Cryptoki) C API the gateway uses, called through koffi: a module's C_* symbols
// bound by name, values passed in memory koffi allocates (stable while a call runs off the event loop).
// koffi, not pkcs11js or graphene-pk11: those compile a native addon at install, and this project installs
// prebuilt binaries only (test/runtime.test.ts); koffi ships one per platform.
import { createRequire } from "node:module";
import type * as Koffi from "koffi";

export const CKR = { OK: 0, ATTRIBUTE_SENSITIVE: 0x11, USER_ALREADY_LOGGED_IN: 0x100, CRYPTOKI_ALREADY_INITIALIZED: 0x191 } as const;
export const CKO = { PUBLIC_KEY: 2, PRIVATE_KEY: 3, SECRET_KEY: 4 } as const;
export const CKK = { EC: 3, GENERIC_SECRET: 0x10 } as const;
export const CKA = {
  CLASS: 0,
  TOKEN: 1,
  PRIVATE: 2,
  LABEL: 3,
  VALUE: 0x11,
  KEY_TYPE: 0x100,
  ID: 0x102,
  SENSITIVE: 0x103,
  SIGN: 0x108,
  VERIFY: 0x10a,
  VALUE_LEN: 0x161,
  EXTRACTABLE: 0x162,
  EC_PARAMS: 0x180,
  EC_POINT: 0x181,
} as const;
export const CKM = { EC_KEY_PAIR_GEN: 0x1040, ECDSA: 0x1041, GENERIC_SECRET_KEY_GEN: 0x350, SHA256_HMAC: 0x251 } as const;
const CKF_RW_SERIAL_SESSION = 0x2 | 0x4;
const CKF_OS_LOCKING_OK = 0x2;
const CKU_USER = 1;
const UL = "unsigned long";

/** An attribute's value: a CK_BBOOL, a CK_ULONG or bytes. */
export type AttrValue = boolean | number | Uint8Array;
export type Template = [type: number, value: AttrValue][];

export class Pkcs11Error extends Error {
  constructor(
    readonly fn: string,
    readonly rv: number,
  ) {
    super(`${fn} failed: CKR 0x${rv.toString(16)}`);
  }
}

interface Attribute {
  type: number;
  pValue: unknown;
  ulValueLen: number;
}

const loaded = new Map<string, Cryptoki>();
/** koffi's type names are process-wide. */
let typesDeclared = false;

type Fn = ReturnType<Koffi.LibraryHandle["func"]>;

/** One loaded module, initialised for calls from several threads (koffi's async calls). */
export class Cryptoki {
  private constructor(
    private readonly koffi: typeof Koffi,
    private readonly f: Record<string, Fn>,
  ) {}

  /** The module at `library`, loaded and initialised once per process (a restart in process reuses it). */
  static load(library: string): Cryptoki {
    let c = loaded.get(library);
    if (!c) loaded.set(library, (c = Cryptoki.init(library)));
    return c;
  }

  private static init(library: string): Cryptoki {
    const koffi = createRequire(import.meta.url)("koffi") as typeof Koffi;
    const lib = koffi.load(library);
    if (!typesDeclared) {
      koffi.struct("CK_ATTRIBUTE", { type: UL, pValue: "void *", ulValueLen: UL });
      koffi.struct("CK_MECHANISM", { mechanism: UL, pParameter: "void *", ulParameterLen: UL });
      koffi.struct("CK_C_INITIALIZE_ARGS", { create: "void *", destroy: "void *", lock: "void *", unlock: "void *", flags: UL, reserved: "void *" });
      typesDeclared = true;
    }
    const r = `${UL} `;
    const f = {
      initialize: lib.func(`${r}C_Initialize(CK_C_INITIALIZE_ARGS *args)`),
      slots: lib.func(`${r}C_GetSlotList(uint8_t present, _Out_ ${UL} *list, _Inout_ ${UL} *count)`),
      tokenInfo: lib.func(`${r}C_GetTokenInfo(${UL} slot, _Out_ uint8_t *info)`),
      open: lib.func(`${r}C_OpenSession(${UL} slot, ${UL} flags, void *app, void *notify, _Out_ ${UL} *session)`),
      login: lib.func(`${r}C_Login(${UL} session, ${UL} user, const char *pin, ${UL} length)`),
      findInit: lib.func(`${r}C_FindObjectsInit(${UL} session, CK_ATTRIBUTE *template, ${UL} count)`),
      find: lib.func(`${r}C_FindObjects(${UL} session, _Out_ ${UL} *objects, ${UL} max, _Out_ ${UL} *count)`),
      findFinal: lib.func(`${r}C_FindObjectsFinal(${UL} session)`),
      getAttributes: lib.func(`${r}C_GetAttributeValue(${UL} session, ${UL} object, _Inout_ CK_ATTRIBUTE *template, ${UL} count)`),
      generateKeyPair: lib.func(
        `${r}C_GenerateKeyPair(${UL} session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *pub, ${UL} npub, CK_ATTRIBUTE *priv, ${UL} npriv, _Out_ ${UL} *hpub, _Out_ ${UL} *hpriv)`,
      ),
      generateKey: lib.func(`${r}C_GenerateKey(${UL} session, CK_MECHANISM *mechanism, CK_ATTRIBUTE *template, ${UL} count, _Out_ ${UL} *key)`),
      signInit: lib.func(`${r}C_SignInit(${UL} session, CK_MECHANISM *mechanism, ${UL} key)`),
      sign: lib.func(`${r}C_Sign(${UL} session, void *data, ${UL} length, void *signature, void *signatureLength)`),
      destroy: lib.func(`${r}C_DestroyObject(${UL} session, ${UL} object)`),
      setAttributes: lib.func(`${r}C_SetAttributeValue(${UL} session, ${UL} object, CK_ATTRIBUTE *template, ${UL} count)`),
    };
    const c = new Cryptoki(koffi, f);
    const rv = f.initialize({ create: null, destroy: null, lock: null, unlock: null, flags: CKF_OS_LOCKING_OK, reserved: null }) as number;
    if (rv !== CKR.OK && rv !== CKR.CRYPTOKI_ALREADY_INITIALIZED) throw new Pkcs11Error("C_Initialize", rv);
    return c;
  }

  /** The slot holding the token labelled `label` (labels are space-padded to 32 bytes). */
  slotOf(label: string): number | undefined {
    const count = [0];
    this.check("C_GetSlotList", this.f.slots!(1, null, count));
    const slots: number[] = new Array<number>(count[0]!).fill(0);
    this.check("C_GetSlotList", this.f.slots!(1, slots, count));
    for (const slot of slots.slice(0, count[0])) {
      const info = Buffer.alloc(256);
      this.check("C_GetTokenInfo", this.f.tokenInfo!(slot, info));
      if (info.subarray(0, 32).toString("utf8").trimEnd() === label) return slot;
    }
    return undefined;
  }

  /** A read-write session, logged in as the user (the login holds for every session of this module). */
  openSession(slot: number, pin: string): number {
    const session = [0];
    this.check("C_OpenSession", this.f.open!(slot, CKF_RW_SERIAL_SESSION, null, null, session));
    const rv = this.f.login!(session[0], CKU_USER, pin, Buffer.byteLength(pin)) as number;
    if (rv !== CKR.OK && rv !== CKR.USER_ALREADY_LOGGED_IN) throw new Pkcs11Error("C_Login", rv);
    return session[0]!;
  }

  find(session: number, template: Template): number[] {
    return this.withTemplate(template, (attrs) => {
      this.check("C_FindObjectsInit", this.f.findInit!(session, attrs, attrs.length));
      const found: number[] = [];
      try {
        for (;;) {
          const batch = new Array<number>(64).fill(0);
          const count = [0];
          this.check("C_FindObjects", this.f.find!(session, batch, 64, count));
          found.push(...batch.slice(0, count[0]));
          if (count[0]! < 64) return found;
        }
      } finally {
        this.f.findFinal!(session);
      }
    });
  }

  /** An attribute's bytes; "sensitive" when the token refuses to show it. */
  attribute(session: number, object: number, type: number, maxBytes = 256): Buffer | "sensitive" {
    const value = this.koffi.alloc("uint8_t", maxBytes);
    try {
      const attrs: Attribute[] = [{ type, pValue: value, ulValueLen: maxBytes }];
      const rv = this.f.getAttributes!(session, object, attrs, 1) as number;
      if (rv === CKR.ATTRIBUTE_SENSITIVE) return "sensitive";
      this.check("C_GetAttributeValue", rv);
      // Copied out: the memory is freed below.
      return Buffer.from(new Uint8Array(this.koffi.view(value, attrs[0]!.ulValueLen)));
    } finally {
      this.koffi.free(value);
    }
  }

  generateKeyPair(session: number, mechanism: number, pub: Template, priv: Template): { pub: number; priv: number } {
    return this.withTemplate(pub, (pubAttrs) =>
      this.withTemplate(priv, (privAttrs) => {
        const [hpub, hpriv] = [[0], [0]];
        const mech = { mechanism, pParameter: null, ulParameterLen: 0 };
        this.check("C_GenerateKeyPair", this.f.generateKeyPair!(session, mech, pubAttrs, pubAttrs.length, privAttrs, privAttrs.length, hpub, hpriv));
        return { pub: hpub[0]!, priv: hpriv[0]! };
      }),
    );
  }

  generateKey(session: number, mechanism: number, template: Template): number {
    return this.withTemplate(template, (attrs) => {
      const key = [0];
      this.check("C_GenerateKey", this.f.generateKey!(session, { mechanism, pParameter: null, ulParameterLen: 0 }, attrs, attrs.length, key));
      return key[0]!;
    });
  }

  setAttributes(session: number, object: number, template: Template): void {
    this.withTemplate(template, (attrs) => this.check("C_SetAttributeValue", this.f.setAttributes!(session, object, attrs, attrs.length)));
  }

  destroy(session: number, object: number): void {
    this.check("C_DestroyObject", this.f.destroy!(session, object));
  }

  /**
   * `data` signed by `key` with `mechanism`, on a worker thread: C_SignInit too, where a token may unwrap and
   * load the key (SoftHSM2 decrypts it and builds an OpenSSL key there, 0.2 ms a signature on the event loop).
   */
  sign(session: number, key: number, mechanism: number, data: Uint8Array, maxBytes: number): Promise<Buffer> {
    const { koffi } = this;
    const input = this.copyIn(data);
    const out = koffi.alloc("uint8_t", maxBytes);
    const length = koffi.alloc(UL, 1);
    koffi.encode(length, UL, maxBytes);
    const free = (): void => {
      for (const p of [input, out, length]) koffi.free(p);
    };
    return new Promise<Buffer>((resolve, reject) => {
      const fail = (err: unknown): void => {
        free();
        reject(err);
      };
      this.f.signInit!.async(session, { mechanism, pParameter: null, ulParameterLen: 0 }, key, (err: unknown, rv: number) => {
        if (err) return fail(err);
        if (rv !== CKR.OK) return fail(new Pkcs11Error("C_SignInit", rv));
        this.f.sign!.async(session, input, data.length, out, length, (err: unknown, rv: number) => {
          try {
            if (err) return reject(err);
            if (rv !== CKR.OK) return reject(new Pkcs11Error("C_Sign", rv));
            resolve(Buffer.from(new Uint8Array(koffi.view(out, Number(koffi.decode(length, UL))))));
          } finally {
            free();
          }
        });
      });
    });
  }

  private copyIn(bytes: Uint8Array): unknown {
    const p = this.koffi.alloc("uint8_t", Math.max(1, bytes.length));
    new Uint8Array(this.koffi.view(p, bytes.length)).set(bytes);
    return p;
  }

  private withTemplate<T>(template: Template, use: (attrs: Attribute[]) => T): T {
    const attrs = template.map(([type, v]): Attribute => {
      const bytes = typeof v === "boolean" ? Uint8Array.of(v ? 1 : 0) : typeof v === "number" ? ulong(v) : v;
      return { type, pValue: this.copyIn(bytes), ulValueLen: bytes.length };
    });
    try {
      return use(attrs);
    } finally {
      for (const a of attrs) this.koffi.free(a.pValue);
    }
  }

  private check(fn: string, rv: unknown): void {
    if (rv !== CKR.OK) throw new Pkcs11Error(fn, rv as number);
  }
}

/** A CK_ULONG as the platform lays it out (64-bit little-endian here). */
function ulong(n: number): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}
